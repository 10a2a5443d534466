git status
git diff
git log -3 --oneline
python -m pytest -q
