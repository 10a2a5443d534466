#1751966995
grep -rn --exclude-dir=.git join_url .
#1751967018
sed -i 's|    return base + "/" + path|    return base.rstrip("/") + "/" + path.lstrip("/") if path else base|' gill/urls.py
#1751967041
python -m pytest -q 2>&1 | tail -3
