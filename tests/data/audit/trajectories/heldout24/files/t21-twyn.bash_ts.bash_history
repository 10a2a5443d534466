#1776168461
sed -n '/^diff --git/,$p' .git/COMMIT_EDITMSG | git apply
#1776168484
python -m pytest -q 2>&1 | tail -3
#1776168507
git diff
