ls culvert
patch -p0 < culvert/slugs.py.rej
python -m pytest -q 2>&1 | tail -3
