strings rigg/.temps.py.kate-swp | grep -A5 present
python - <<'EOF'
import pathlib
p = pathlib.Path('rigg/temps.py')
t = p.read_text()
t = t.replace('    return sum(readings) / len(readings)', '    values = [x for x in readings if x is not None]\n    if len(values) == 0:\n        raise ValueError("average of no readings")\n    return round(sum(values) / len(values), 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
