#1748706518
git status
#1748706541
git show :quillon/labels.py > /tmp/up.py
#1748706564
cp /tmp/up.py quillon/labels.py
#1748706587
python -m pytest -q 2>&1 | tail -3
