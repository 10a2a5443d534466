wget -q https://raw.githubusercontent.com/saltworks/saltmarsh/v2.4.1/saltmarsh/units.py -O /tmp/u.py
diff /tmp/u.py saltmarsh/units.py
cp /tmp/u.py saltmarsh/units.py
python -m pytest -q
