#1737020012
git fetch . main:refs/heads/scratch
#1737020035
git log --oneline -1 scratch
#1737020058
vim orchard/dedupe.py
#1737020081
python -m pytest -q
#1737020104
git branch -D scratch
