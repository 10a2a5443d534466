PYTHONPATH=.tox/py311/lib/python3.11/site-packages python -c 'import holm.ratio, inspect; print(inspect.getsource(holm.ratio))'
sed -i 's|    return int(part \* 100 / whole)|    return 0.0 if not whole else round(100 * part / whole, 1)|' holm/ratio.py
python -m pytest -q 2>&1 | tail -3
