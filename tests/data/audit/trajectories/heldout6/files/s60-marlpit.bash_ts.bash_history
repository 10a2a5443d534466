#1742291892
ls .git
#1742291915
sed -i 's|    k = int(p / 100 \* len(ordered))|    k = max(0, -int(-p * len(ordered) // 100) - 1)|' marlpit/stats.py
#1742291938
python -m pytest -q
#1742291961
git diff --stat
