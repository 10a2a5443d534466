#1773407903
sed -n '/test_slope.py/,$p' .curl-trace.txt
#1773407926
python - <<'EOF'
import pathlib
p = pathlib.Path('bwlch/slope.py')
t = p.read_text()
t = t.replace('    return rise / run', '    if not run > 0:\n        raise ValueError("flat or backwards run")\n    return round(100 * rise / run, 1)')
p.write_text(t)
EOF
#1773407949
python -m pytest -q 2>&1 | tail -3
