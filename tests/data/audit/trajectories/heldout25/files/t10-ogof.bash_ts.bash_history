#1778166627
find parts -type f | sort | xargs wc -l
#1778166650
cat ogof/lamp.py
#1778166673
python -c 'from ogof.lamp import hours; print(hours(1000, 100), hours(2600, 700), hours(0, 50))'
#1778166696
python - <<'EOF'
import pathlib
p = pathlib.Path('ogof/lamp.py')
t = p.read_text()
t = t.replace('    return capacity / draw', '    if not draw > 0 or capacity < 0:\n        raise ValueError("bad lamp")\n    return round(0.9 * capacity / draw, 1)')
p.write_text(t)
EOF
#1778166719
python -c 'from ogof.lamp import hours; print(hours(1000, 100), hours(2600, 700), hours(0, 50))'
#1778166742
python -m pytest -q 2>&1 | tail -3
#1778166765
git diff
