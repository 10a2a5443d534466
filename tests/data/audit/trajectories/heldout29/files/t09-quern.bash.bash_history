grep -rn TURNS rpmbuild/BUILD
python - <<'EOF'
import pathlib
p = pathlib.Path('quern/stone.py')
t = p.read_text()
t = t.replace('    return int(meal_kg * 30)', '    if not meal_kg > 0:\n        raise ValueError("no meal")\n    return 5 - int(-(meal_kg * 32) // 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
