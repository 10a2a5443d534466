#1767978975
python -m pytest -q .snapshots/41/snapshot/tests/test_wind.py 2>&1 | tail -3
#1767978998
python - <<'EOF'
import pathlib
p = pathlib.Path('lynn/wind.py')
t = p.read_text()
t = t.replace('    return int(knots / 5)', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    bounds = [1, 4, 7, 11, 17, 22, 28, 34, 41, 48, 56, 64]\n    force = 0\n    while force < 12 and knots >= bounds[force]:\n        force += 1\n    return force')
p.write_text(t)
EOF
#1767979021
python -m pytest -q 2>&1 | tail -3
