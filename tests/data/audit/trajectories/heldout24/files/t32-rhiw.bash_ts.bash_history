#1776358394
cat 'README.md~'
#1776358417
cat rhiw/grade.py
#1776358440
python -c 'from rhiw.grade import gradient; print(gradient(1, 3), gradient(-10, 100), gradient(12, 80))'
#1776358463
python - <<'EOF'
import pathlib
p = pathlib.Path('rhiw/grade.py')
t = p.read_text()
t = t.replace('    return rise / run * 100', '    if not run > 0:\n        raise ValueError("bad run")\n    return round(100 * abs(rise) / run, 1)')
p.write_text(t)
EOF
#1776358486
python -c 'from rhiw.grade import gradient; print(gradient(1, 3), gradient(-10, 100), gradient(12, 80))'
#1776358509
python -m pytest -q 2>&1 | tail -3
#1776358532
git diff
