git log -S'seen.add' --oneline
git grep -n seen HEAD -- orchard
vim orchard/dedupe.py
python -m pytest -q
git diff
