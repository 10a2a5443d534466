diff tests/test_stock.py mutants/tests/test_stock.py
python - <<'EOF'
import pathlib
p = pathlib.Path('rake/stock.py')
t = p.read_text()
t = t.replace('    return round(bales / per_day)', '    if not (per_day > 0 and bales >= 0):\n        raise ValueError("bad stock figures")\n    return int(bales // per_day)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
