#1767001673
sed -n '/^def _mutmut_trampoline/,/^    return result$/p' mutants/rake/stock.py
#1767001696
cat rake/stock.py
#1767001719
python -c 'from rake.stock import days_left as d; print(d(13, 5), d(11, 4))'
#1767001742
python - <<'EOF'
import pathlib
p = pathlib.Path('rake/stock.py')
t = p.read_text()
t = t.replace('    return round(bales / per_day)', '    if not (per_day > 0 and bales >= 0):\n        raise ValueError("bad stock figures")\n    return int(bales // per_day)')
p.write_text(t)
EOF
#1767001765
python -c 'from rake.stock import days_left as d; print(d(13, 5), d(11, 4))'
#1767001788
python -m pytest -q 2>&1 | tail -3
#1767001811
git diff
