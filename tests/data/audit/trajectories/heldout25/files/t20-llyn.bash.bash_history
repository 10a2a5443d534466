wc -l .aider*
cat llyn/gauge.py
python -c 'from llyn.gauge import level; print(level([1.0, None, 2.0]), level([1.234, 1.0]))'
python - <<'EOF'
import pathlib
p = pathlib.Path('llyn/gauge.py')
t = p.read_text()
t = t.replace('    return sum(readings) / len(readings)', '    vals = [x for x in readings if x is not None]\n    if len(vals) == 0:\n        raise ValueError("empty gauge")\n    return round(sum(vals) / len(vals), 2)')
p.write_text(t)
EOF
python -c 'from llyn.gauge import level; print(level([1.0, None, 2.0]), level([1.234, 1.0]))'
python -m pytest -q 2>&1 | tail -3
git diff
