grep -rn --exclude=bandit-report.txt --exclude-dir=.git 'stones(' .
cat crub/wall.py
python -c 'from crub.wall import stones; print(stones(2), stones(1.5), stones(0.1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('crub/wall.py')
t = p.read_text()
t = t.replace('    return int(side_m * 4 * 9)', '    if not side_m > 0:\n        raise ValueError("no wall")\n    return -int(-(side_m * 108) // 1)')
p.write_text(t)
EOF
python -c 'from crub.wall import stones; print(stones(2), stones(1.5), stones(0.1))'
python -m pytest -q 2>&1 | tail -3
git diff
