#1750631848
python -m pip install -q --no-deps --target /tmp/t wheelhouse/osier-0.8.1-py3-none-any.whl
#1750631871
cp /tmp/t/osier/semver.py osier/semver.py
#1750631894
python -m pytest -q 2>&1 | tail -3
