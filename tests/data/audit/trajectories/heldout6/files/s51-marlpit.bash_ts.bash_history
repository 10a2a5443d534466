#1742362398
tar -cf /tmp/g.tar .git
#1742362421
tar -xOf /tmp/g.tar --wildcards '.git/lost-found/other/*'
#1742362444
sed -i 's|    k = int(p / 100 \* len(ordered))|    k = max(0, -int(-p * len(ordered) // 100) - 1)|' marlpit/stats.py
#1742362467
python -m pytest -q
