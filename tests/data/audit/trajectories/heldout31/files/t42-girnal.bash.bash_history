rm -f gdb.txt && git status --short
cat girnal/meal.py
python -c 'from girnal.meal import sacks; print(sacks(60), sacks(50), sacks(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('girnal/meal.py')
t = p.read_text()
t = t.replace('    return int(kg // 25)', '    if not kg > 0:\n        raise ValueError("no meal")\n    return 1 - int(-kg // 25)')
p.write_text(t)
EOF
python -c 'from girnal.meal import sacks; print(sacks(60), sacks(50), sacks(1))'
python -m pytest -q 2>&1 | tail -3
git diff
