#1734909823
g\it lo"g" -p -1 w\ip/merge-order
#1734909846
vim ferrule/merge.py
#1734909869
python -m pytest -q
