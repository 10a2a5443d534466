git stash
git stash list
git stash apply stash@{1}
python -m pytest -q
