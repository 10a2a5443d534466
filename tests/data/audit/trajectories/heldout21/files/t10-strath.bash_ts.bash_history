#1771449711
wc -l *.ps
#1771449734
cat strath/bmi.py
#1771449757
python -c 'from strath.bmi import bmi; print(bmi(70, 1.75), bmi(70, 175))'
#1771449780
python - <<'EOF'
import pathlib
p = pathlib.Path('strath/bmi.py')
t = p.read_text()
t = t.replace('    return weight / height ** 2', '    if not (weight > 0 and height > 0):\n        raise ValueError("weight and height must be above zero")\n    metres = height / 100 if height > 3 else height\n    return round(weight / (metres * metres), 1)')
p.write_text(t)
EOF
#1771449803
python -c 'from strath.bmi import bmi; print(bmi(70, 1.75), bmi(70, 175))'
#1771449826
python -m pytest -q 2>&1 | tail -3
#1771449849
git diff
