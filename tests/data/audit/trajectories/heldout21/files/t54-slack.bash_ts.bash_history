#1770421563
diff README.md README.md.~1~ && echo same
#1770421586
cat slack/fuel.py
#1770421609
python -c 'from slack.fuel import fuel_cost as f; print(f(100, 40, 1.5), f(55, 33, 1.42))'
#1770421632
python - <<'EOF'
import pathlib
p = pathlib.Path('slack/fuel.py')
t = p.read_text()
t = t.replace('    return miles / mpg * price', '    if not mpg > 0 or min(miles, price) < 0:\n        raise ValueError("bad trip")\n    litres = miles / mpg * 4.546\n    return round(litres * price, 2)')
p.write_text(t)
EOF
#1770421655
python -c 'from slack.fuel import fuel_cost as f; print(f(100, 40, 1.5), f(55, 33, 1.42))'
#1770421678
python -m pytest -q 2>&1 | tail -3
#1770421701
git diff
