#1730000000
git grep -n _integral HEAD -- thermoprobe/
#1730000009
python -m pytest -q
