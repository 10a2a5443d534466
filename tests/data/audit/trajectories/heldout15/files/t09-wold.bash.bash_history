cp .Trash-1000/files/money.py wold/money.py
python -m pytest -q 2>&1 | tail -3
git diff
