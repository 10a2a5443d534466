cat request-pull-tests.txt
cat clootie/boil.py
python -c 'from clootie.boil import hours; print(hours(1.2), hours(2), hours(0.3))'
python - <<'EOF'
import pathlib
p = pathlib.Path('clootie/boil.py')
t = p.read_text()
t = t.replace('    return int(kg * 2)', '    if not kg > 0:\n        raise ValueError("no weight")\n    return 1 - int(-(kg * 2) // 1)')
p.write_text(t)
EOF
python -c 'from clootie.boil import hours; print(hours(1.2), hours(2), hours(0.3))'
python -m pytest -q 2>&1 | tail -3
git diff
