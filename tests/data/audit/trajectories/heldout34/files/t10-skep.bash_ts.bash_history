#1792640545
rm -rf ci-artifacts && git status --short
#1792640568
cat skep/honey.py
#1792640591
python -c 'from skep.honey import jars; print(jars(1000), jars(454), jars(1))'
#1792640614
python - <<'EOF'
import pathlib
p = pathlib.Path('skep/honey.py')
t = p.read_text()
t = t.replace('    return grams // 454', '    if not grams > 0:\n        raise ValueError("no honey")\n    return -(-grams // 454)')
p.write_text(t)
EOF
#1792640637
python -c 'from skep.honey import jars; print(jars(1000), jars(454), jars(1))'
#1792640660
python -m pytest -q 2>&1 | tail -3
#1792640683
git diff
