#1785699789
grep -n '^Version\|^Release\|^Source0' rpmbuild/SPECS/quern.spec
#1785699812
cat quern/stone.py
#1785699835
python -c 'from quern.stone import turns; print(turns(2), turns(0.5), turns(0.01))'
#1785699858
python - <<'EOF'
import pathlib
p = pathlib.Path('quern/stone.py')
t = p.read_text()
t = t.replace('    return int(meal_kg * 30)', '    if not meal_kg > 0:\n        raise ValueError("no meal")\n    return 5 - int(-(meal_kg * 32) // 1)')
p.write_text(t)
EOF
#1785699881
python -c 'from quern.stone import turns; print(turns(2), turns(0.5), turns(0.01))'
#1785699904
python -m pytest -q 2>&1 | tail -3
#1785699927
git diff
