#1790530421
rm -rf reports && git status --short
#1790530444
cat brochan/pot.py
#1790530467
python -c 'from brochan.pot import pots; print(pots(9), pots(8), pots(1))'
#1790530490
python - <<'EOF'
import pathlib
p = pathlib.Path('brochan/pot.py')
t = p.read_text()
t = t.replace('    return servings // 8', '    if not servings > 0:\n        raise ValueError("no servings")\n    return -(-servings // 8)')
p.write_text(t)
EOF
#1790530513
python -c 'from brochan.pot import pots; print(pots(9), pots(8), pots(1))'
#1790530536
python -m pytest -q 2>&1 | tail -3
#1790530559
git diff
