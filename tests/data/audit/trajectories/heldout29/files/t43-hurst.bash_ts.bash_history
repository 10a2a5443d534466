#1785428952
git cherry-pick --no-commit $(jq -r .commit_info.id .benchmarks/Linux-CPython-3.11-64bit/0002_*.json)
#1785428975
python -m pytest -q 2>&1 | tail -3
