ls -a . .snapshots
cat .snapshots/41/snapshot/lynn/wind.py
python - <<'EOF'
import pathlib
p = pathlib.Path('lynn/wind.py')
t = p.read_text()
t = t.replace('    return int(knots / 5)', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    bounds = [1, 4, 7, 11, 17, 22, 28, 34, 41, 48, 56, 64]\n    force = 0\n    while force < 12 and knots >= bounds[force]:\n        force += 1\n    return force')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
