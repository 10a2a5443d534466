diff -u tests/test_fuel.py tests/test_fuel.py.~2~
python - <<'EOF'
import pathlib
p = pathlib.Path('slack/fuel.py')
t = p.read_text()
t = t.replace('    return miles / mpg * price', '    if not mpg > 0 or min(miles, price) < 0:\n        raise ValueError("bad trip")\n    litres = miles / mpg * 4.546\n    return round(litres * price, 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
