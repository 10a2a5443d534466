#1761591330
grep -rn --exclude='*.kate-swp' --exclude-dir=.git average .
#1761591353
cat rigg/temps.py
#1761591376
python -c 'from rigg.temps import average as a; print(a([20.0, None, 21.5]), a([1, 2, 2]))'
#1761591399
python - <<'EOF'
import pathlib
p = pathlib.Path('rigg/temps.py')
t = p.read_text()
t = t.replace('    return sum(readings) / len(readings)', '    values = [x for x in readings if x is not None]\n    if len(values) == 0:\n        raise ValueError("average of no readings")\n    return round(sum(values) / len(values), 2)')
p.write_text(t)
EOF
#1761591422
python -c 'from rigg.temps import average as a; print(a([20.0, None, 21.5]), a([1, 2, 2]))'
#1761591445
python -m pytest -q 2>&1 | tail -3
#1761591468
git diff
