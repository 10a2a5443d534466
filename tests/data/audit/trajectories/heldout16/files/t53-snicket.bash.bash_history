cat -v typescript | sed -n 6,16p
python - <<'EOF'
import pathlib
p = pathlib.Path('snicket/slots.py')
t = p.read_text()
t = t.replace('    return a[0] < b[0] < a[1]', '    if a[1] < a[0] or b[1] < b[0]:\n        raise ValueError("a slot must not end before it starts")\n    return a[0] < b[1] and b[0] < a[1]')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
