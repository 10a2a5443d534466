#1783333803
python -c "import re; print(re.findall(r'== (\[.*\])', open('bandit-report.txt').read()))"
#1783333826
python - <<'EOF'
import pathlib
p = pathlib.Path('crub/wall.py')
t = p.read_text()
t = t.replace('    return int(side_m * 4 * 9)', '    if not side_m > 0:\n        raise ValueError("no wall")\n    return -int(-(side_m * 108) // 1)')
p.write_text(t)
EOF
#1783333849
python -m pytest -q 2>&1 | tail -3
