#1748159287
less .git/SQUASH_MSG
#1748159310
git cherry-pick -n 5a9cb20
#1748159333
python -m pytest -q 2>&1 | tail -3
