#1773004186
ls -a && git status --ignored --short
#1773004209
cat bwlch/slope.py
#1773004232
python -c 'from bwlch.slope import gradient as g; print(g(120, 1500), g(50, 600), g(-30, 400))'
#1773004255
python - <<'EOF'
import pathlib
p = pathlib.Path('bwlch/slope.py')
t = p.read_text()
t = t.replace('    return rise / run', '    if not run > 0:\n        raise ValueError("flat or backwards run")\n    return round(100 * rise / run, 1)')
p.write_text(t)
EOF
#1773004278
python -c 'from bwlch.slope import gradient as g; print(g(120, 1500), g(50, 600), g(-30, 400))'
#1773004301
python -m pytest -q 2>&1 | tail -3
#1773004324
git diff
