#1789128692
sed -n '/^diff --git/,$p' request-pull.txt | git apply && git status --short
#1789128715
python -m pytest -q 2>&1 | tail -3
#1789128738
git diff --stat
