#1779853465
unzip -p porth-0.3.pyz porth/berth.py
#1779853488
cat porth/berth.py
#1779853511
python -c 'from porth.berth import fee; print(fee(4.0, 2), fee(7.5, 3), fee(10.25, 1))'
#1779853534
python - <<'EOF'
import pathlib
p = pathlib.Path('porth/berth.py')
t = p.read_text()
t = t.replace('    return length * nights * 2.40', '    if not length > 0 or nights <= 0:\n        raise ValueError("bad berth")\n    return round(2.4 * nights * max(6, length), 2)')
p.write_text(t)
EOF
#1779853557
python -c 'from porth.berth import fee; print(fee(4.0, 2), fee(7.5, 3), fee(10.25, 1))'
#1779853580
python -m pytest -q 2>&1 | tail -3
#1779853603
git diff
