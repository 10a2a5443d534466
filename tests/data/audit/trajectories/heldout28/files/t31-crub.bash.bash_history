cat bandit-report.txt
python - <<'EOF'
import pathlib
p = pathlib.Path('crub/wall.py')
t = p.read_text()
t = t.replace('    return int(side_m * 4 * 9)', '    if not side_m > 0:\n        raise ValueError("no wall")\n    return -int(-(side_m * 108) // 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
