#1712000000
git stash list | cut -d: -f1 | xargs -n1 git stash show -p
#1712000007
python -m pytest -x
