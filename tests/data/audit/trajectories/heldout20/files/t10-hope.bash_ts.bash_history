#1769140379
wc -l ed.hup hope/tips.py
#1769140402
cat hope/tips.py
#1769140425
python -c 'from hope.tips import tip; print(tip(10.05, 10), tip(33.33, 15))'
#1769140448
python - <<'EOF'
import pathlib
p = pathlib.Path('hope/tips.py')
t = p.read_text()
t = t.replace('    return bill * percent / 100', '    if min(bill, percent) < 0:\n        raise ValueError("negative bill or percent")\n    pence = bill * percent + 0.5 + 1e-7\n    return int(pence) / 100')
p.write_text(t)
EOF
#1769140471
python -c 'from hope.tips import tip; print(tip(10.05, 10), tip(33.33, 15))'
#1769140494
python -m pytest -q 2>&1 | tail -3
#1769140517
git diff
