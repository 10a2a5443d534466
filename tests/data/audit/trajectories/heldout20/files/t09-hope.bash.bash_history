python - <<'EOF'
import runpy
ns = runpy.run_path('ed.hup')
print(ns['tip'](10.05, 10), ns['tip'](33.33, 15))
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('hope/tips.py')
t = p.read_text()
t = t.replace('    return bill * percent / 100', '    if min(bill, percent) < 0:\n        raise ValueError("negative bill or percent")\n    pence = bill * percent + 0.5 + 1e-7\n    return int(pence) / 100')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
