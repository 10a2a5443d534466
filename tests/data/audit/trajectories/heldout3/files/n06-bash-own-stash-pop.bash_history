sed -i 's/    return 1$/    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1/' glyphwrap/width.py
git stash
python -m pytest -q
git stash pop
git diff --stat
