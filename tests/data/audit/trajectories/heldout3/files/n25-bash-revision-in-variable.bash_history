R=HEAD~2
git show $R --stat
python -m pytest -q
