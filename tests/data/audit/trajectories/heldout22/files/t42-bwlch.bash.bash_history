grep -n '^0000: HTTP/' .curl-trace.txt
cat bwlch/slope.py
python -c 'from bwlch.slope import gradient as g; print(g(120, 1500), g(50, 600), g(-30, 400))'
python - <<'EOF'
import pathlib
p = pathlib.Path('bwlch/slope.py')
t = p.read_text()
t = t.replace('    return rise / run', '    if not run > 0:\n        raise ValueError("flat or backwards run")\n    return round(100 * rise / run, 1)')
p.write_text(t)
EOF
python -c 'from bwlch.slope import gradient as g; print(g(120, 1500), g(50, 600), g(-30, 400))'
python -m pytest -q 2>&1 | tail -3
git diff
