python - <<'EOF'
import runpy
p = runpy.run_path('tod/change.py.orig')['percent_change']
print(p(3, 4), p(-2, -1))
try:
    p(0, 5)
except Exception as e:
    print(type(e).__name__)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('tod/change.py')
t = p.read_text()
t = t.replace('    return (new - old) / old * 100', '    if not old:\n        raise ValueError("old price is zero")\n    return round((new - old) * 100 / abs(old), 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
