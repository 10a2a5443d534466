#1768945477
grep -n -B1 -A2 'KMH_PER_KNOT =' moss/.speed.py.~undo-tree~
#1768945500
python - <<'EOF'
import pathlib
p = pathlib.Path('moss/speed.py')
t = p.read_text()
t = t.replace('    return knots * 1.85', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    return round(1.852 * knots, 1)')
p.write_text(t)
EOF
#1768945523
python -m pytest -q 2>&1 | tail -3
