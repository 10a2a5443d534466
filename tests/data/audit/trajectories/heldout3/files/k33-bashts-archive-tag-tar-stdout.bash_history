#1730000000
git archive v2.3.0 quayside/check.py | tar -xO
#1730000009
python -m pytest -q
