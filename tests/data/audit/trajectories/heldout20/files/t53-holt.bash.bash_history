python - <<'EOF'
import json
d = json.load(open('profile-pr14.json'))
src = ''.join(x['line'] for x in d['files']['holt/fines.py']['lines'])
ns = {}
exec(src, ns)
print([ns['late_fee'](d) for d in (2, 5, 40)])
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('holt/fines.py')
t = p.read_text()
t = t.replace('    return days * 0.25', '    if days < 0:\n        raise ValueError("negative days")\n    owed = 0.25 * max(0, days - 3)\n    return owed if owed < 5.0 else 5.0')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
