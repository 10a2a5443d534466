#1730000000
git merge --ff-only FETCH_HEAD
#1730000009
grep -n Sunday cronwheel/fields.py
#1730000018
python -m pytest -q
