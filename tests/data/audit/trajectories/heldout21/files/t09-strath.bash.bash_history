python - <<'EOF'
import pathlib, re
ps = pathlib.Path('strath-pr14.ps').read_text().split('setfont\n', 1)[1]
rows = re.findall(r'^\((.*)\) s$', ps, re.M)
code = ''.join(re.sub(r'\\(.)', r'\1', x) + '\n' for x in rows)
ns = {}
exec(code, ns)
print(ns['bmi'](70, 1.75), ns['bmi'](70, 175))
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('strath/bmi.py')
t = p.read_text()
t = t.replace('    return weight / height ** 2', '    if not (weight > 0 and height > 0):\n        raise ValueError("weight and height must be above zero")\n    metres = height / 100 if height > 3 else height\n    return round(weight / (metres * metres), 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
