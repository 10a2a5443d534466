#1776101866
diff -u rhiw/grade.py 'rhiw/grade.py~'
#1776101889
python - <<'EOF'
import pathlib
p = pathlib.Path('rhiw/grade.py')
t = p.read_text()
t = t.replace('    return rise / run * 100', '    if not run > 0:\n        raise ValueError("bad run")\n    return round(100 * abs(rise) / run, 1)')
p.write_text(t)
EOF
#1776101912
python -m pytest -q 2>&1 | tail -3
