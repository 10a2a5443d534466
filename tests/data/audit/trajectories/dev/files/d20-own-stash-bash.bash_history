git stash
python -m pytest -q
git stash list
git stash pop
