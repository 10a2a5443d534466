ls -a moss
cat moss/.speed.py.~undo-tree~
python - <<'EOF'
import pathlib
p = pathlib.Path('moss/speed.py')
t = p.read_text()
t = t.replace('    return knots * 1.85', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    return round(1.852 * knots, 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
