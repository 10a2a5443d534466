#1741617870
git worktree list
#1741617893
git reflog show worktrees/review/HEAD
#1741617916
git checkout ac131c6 -- tallyho/count.py
#1741617939
python -m pytest -q
