git log --oneline -3
git cherry-pick --no-commit refs/changes/47/1047/3
git diff --cached --stat
python -m pytest -q
