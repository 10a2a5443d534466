patch -p1 < patches/upstream-ranges-dedupe.patch
python -m pytest -q 2>&1 | tail -3
git diff --stat
