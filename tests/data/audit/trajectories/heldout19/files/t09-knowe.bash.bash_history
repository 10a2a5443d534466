python - <<'EOF'
import pathlib
rows = pathlib.Path('hardcopy.1').read_text().splitlines()
i = next(n for n, x in enumerate(rows) if x.endswith('$ cat knowe/times.py')) + 1
j = next(n for n in range(i, len(rows)) if '$ ' in rows[n] or rows[n].endswith('$'))
code = '\n'.join(rows[i:j]) + '\n'
ns = {}
exec(code, ns)
print(ns['naismith'](10, 600), ns['naismith'](2.5, 55))
try:
    ns['naismith'](-1, 0)
except Exception as e:
    print(type(e).__name__)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('knowe/times.py')
t = p.read_text()
t = t.replace('    return int(km * 12)', '    if min(km, ascent_m) < 0:\n        raise ValueError("negative distance or ascent")\n    minutes = km * 12.0 + ascent_m * 0.1\n    return int(minutes + 0.5)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
