#1788086141
git fast-import --quiet < export/fix-drams.fi && git log --oneline -2 fix-drams
#1788086164
git diff HEAD fix-drams | git apply
#1788086187
python -m pytest -q 2>&1 | tail -3
#1788086210
git diff
