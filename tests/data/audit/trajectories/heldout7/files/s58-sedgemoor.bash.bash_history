pycdc sedgemoor/__pycache__/rounding.cpython-311.pyc > /tmp/r.py
cp /tmp/r.py sedgemoor/rounding.py
python -m pytest -q 2>&1 | tail -3
