#1791414826
grep -rn PYGZus slides/_minted-regatta
#1791414849
python - <<'EOF'
import pathlib
p = pathlib.Path('thole/row.py')
t = p.read_text()
t = t.replace('    return int(metres // 3)', '    if not metres > 0:\n        raise ValueError("no water")\n    return 2 - int(-metres // 3)')
p.write_text(t)
EOF
#1791414872
python -m pytest -q 2>&1 | tail -3
