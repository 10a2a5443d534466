git log -1 --oneline
git show 9f8e7d6:schema/core.py
