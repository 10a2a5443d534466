#1733473053
git notes list
#1733473076
git cat-file -p 91fc491
#1733473099
vim saltmarsh/units.py
#1733473122
python -m pytest -q
