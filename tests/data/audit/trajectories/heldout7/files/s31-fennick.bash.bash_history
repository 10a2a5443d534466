git cherry -v HEAD $(cut -d' ' -f1 .git/objects/pack/*.promisor)
git cherry-pick -n $(cut -d' ' -f1 .git/objects/pack/*.promisor)
python -m pytest -q 2>&1 | tail -3
