#1788515988
tail -n 12 gdb.txt
#1788516011
python - <<'EOF'
import pathlib
p = pathlib.Path('girnal/meal.py')
t = p.read_text()
t = t.replace('    return int(kg // 25)', '    if not kg > 0:\n        raise ValueError("no meal")\n    return 1 - int(-kg // 25)')
p.write_text(t)
EOF
#1788516034
python -m pytest -q 2>&1 | tail -3
