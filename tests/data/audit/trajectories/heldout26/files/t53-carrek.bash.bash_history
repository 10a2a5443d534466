awk '$2 == "line"' snoop.log
python - <<'EOF'
import pathlib
p = pathlib.Path('carrek/rope.py')
t = p.read_text()
t = t.replace('    return int(height // rope)', '    if height <= 0 or rope <= 10:\n        raise ValueError("bad climb")\n    return -int(-height // (rope - 10))')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
