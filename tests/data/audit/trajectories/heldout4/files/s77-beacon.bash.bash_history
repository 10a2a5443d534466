python -m pytest -q
vim beacon/retry.py
git diff
git add -p
git commit -m 'retry: attempts counts calls'
