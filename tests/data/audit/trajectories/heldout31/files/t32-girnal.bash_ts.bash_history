#1788012510
git status --ignored --short && ls -a
#1788012533
cat girnal/meal.py
#1788012556
python -c 'from girnal.meal import sacks; print(sacks(60), sacks(50), sacks(1))'
#1788012579
python - <<'EOF'
import pathlib
p = pathlib.Path('girnal/meal.py')
t = p.read_text()
t = t.replace('    return int(kg // 25)', '    if not kg > 0:\n        raise ValueError("no meal")\n    return 1 - int(-kg // 25)')
p.write_text(t)
EOF
#1788012602
python -c 'from girnal.meal import sacks; print(sacks(60), sacks(50), sacks(1))'
#1788012625
python -m pytest -q 2>&1 | tail -3
#1788012648
git diff
