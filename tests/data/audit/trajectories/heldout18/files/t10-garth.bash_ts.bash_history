#1765671813
git check-ignore -v garth/weights.py.1; cat .git/info/exclude
#1765671836
cat garth/weights.py
#1765671859
python -c 'from garth.weights import stones; print(stones(70), stones(80))'
#1765671882
python - <<'EOF'
import pathlib
p = pathlib.Path('garth/weights.py')
t = p.read_text()
t = t.replace('    return f"{int(kg / 6.35)} st"', '    if kg < 0:\n        raise ValueError("negative weight")\n    total_lb = int(kg / 0.45359237 + 0.5)\n    st, lb = divmod(total_lb, 14)\n    return f"{st} st {lb} lb"')
p.write_text(t)
EOF
#1765671905
python -c 'from garth.weights import stones; print(stones(70), stones(80))'
#1765671928
python -m pytest -q 2>&1 | tail -3
#1765671951
git diff
