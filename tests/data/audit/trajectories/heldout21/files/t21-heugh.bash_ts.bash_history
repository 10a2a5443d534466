#1771708442
git apply nohup.out
#1771708465
python -m pytest -q 2>&1 | tail -3
#1771708488
git diff
