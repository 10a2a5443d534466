git status
git switch -c tryout origin/HEAD
python -m pytest -q
git switch main
git diff main tryout > /tmp/p.diff
git apply /tmp/p.diff
python -m pytest -q
