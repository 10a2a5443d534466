#1769654800
cp clough/scores.py.bak clough/scores.py && cp tests/test_scores.py.bak tests/test_scores.py
#1769654823
python -m pytest -q 2>&1 | tail -3
#1769654846
git diff
