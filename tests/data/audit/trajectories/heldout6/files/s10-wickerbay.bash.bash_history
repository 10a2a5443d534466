peek() { git grep -n -e size "$1" -- wickerbay/; }; peek HEAD
sed -i 's/if size <= 1024 or unit/if -1024 < size < 1024 or unit/' wickerbay/units.py
python -m pytest -q
git diff
