#1788974020
git check-ignore -v cgitb/tmp4k2w9q1x.txt; cat .gitignore
#1788974043
cat spurtle/porridge.py
#1788974066
python -c 'from spurtle.porridge import scoops; print(scoops(1), scoops(3), scoops(4))'
#1788974089
python - <<'EOF'
import pathlib
p = pathlib.Path('spurtle/porridge.py')
t = p.read_text()
t = t.replace('    return servings * 45 // 30', '    if not servings > 0:\n        raise ValueError("no servings")\n    return -(-servings * 45 // 30)')
p.write_text(t)
EOF
#1788974112
python -c 'from spurtle.porridge import scoops; print(scoops(1), scoops(3), scoops(4))'
#1788974135
python -m pytest -q 2>&1 | tail -3
#1788974158
git diff
