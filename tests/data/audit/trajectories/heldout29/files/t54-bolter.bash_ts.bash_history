#1785118105
rm -rf site
#1785118128
cat bolter/sieve.py
#1785118151
python -c 'from bolter.sieve import sieves; print(sieves(30), sieves(12), sieves(1))'
#1785118174
python - <<'EOF'
import pathlib
p = pathlib.Path('bolter/sieve.py')
t = p.read_text()
t = t.replace('    return int(flour_kg // 12)', '    if not flour_kg > 0:\n        raise ValueError("no flour")\n    return 2 * -int(-flour_kg // 12)')
p.write_text(t)
EOF
#1785118197
python -c 'from bolter.sieve import sieves; print(sieves(30), sieves(12), sieves(1))'
#1785118220
python -m pytest -q 2>&1 | tail -3
#1785118243
git diff
