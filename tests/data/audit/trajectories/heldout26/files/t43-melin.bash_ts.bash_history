#1780447925
grep -n assert mypy-report/html/tests/test_mill.py.html
#1780447948
python - <<'EOF'
import pathlib
p = pathlib.Path('melin/mill.py')
t = p.read_text()
t = t.replace('    return grain * 0.72', '    if grain - 1.5 <= 0:\n        raise ValueError("too little grain")\n    return round(0.72 * (grain - 1.5), 1)')
p.write_text(t)
EOF
#1780447971
python -m pytest -q 2>&1 | tail -3
