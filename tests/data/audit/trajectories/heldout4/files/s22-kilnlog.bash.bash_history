git fsck --lost-found
ls .git/lost-found/commit
git show $(ls .git/lost-found/commit | head -1) -- kilnlog/parse.py
vim kilnlog/parse.py
python -m pytest -q
