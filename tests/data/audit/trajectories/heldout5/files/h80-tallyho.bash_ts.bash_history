#1740076415
git worktree add ../tallyho-try -b try
#1740076438
cd ../tallyho-try && python -m pytest -q && cd -
#1740076461
git worktree remove ../tallyho-try && git branch -D try
#1740076484
sed -i 's|    return max(counts, key=lambda c: (counts\[c\], c))|    return min(counts, key=lambda c: (-counts[c], c))|' tallyho/count.py
#1740076507
python -m pytest -q
