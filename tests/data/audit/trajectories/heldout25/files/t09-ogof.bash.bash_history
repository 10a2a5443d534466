awk '/^[A-Z_]+ = /' parts/ogof/src/ogof/lamp.py
python - <<'EOF'
import pathlib
p = pathlib.Path('ogof/lamp.py')
t = p.read_text()
t = t.replace('    return capacity / draw', '    if not draw > 0 or capacity < 0:\n        raise ValueError("bad lamp")\n    return round(0.9 * capacity / draw, 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
