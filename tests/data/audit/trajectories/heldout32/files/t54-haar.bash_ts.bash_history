#1789793411
wc -l apidocs/*/haar.horn.html && grep -c bigsection apidocs/*/haar.horn.html
#1789793434
cat haar/horn.py
#1789793457
python -c 'from haar.horn import blasts; print(blasts(5), blasts(2), blasts(0.5))'
#1789793480
python - <<'EOF'
import pathlib
p = pathlib.Path('haar/horn.py')
t = p.read_text()
t = t.replace('    return int(minutes // 2)', '    if not minutes > 0:\n        raise ValueError("no minutes")\n    return 1 - int(-minutes // 2)')
p.write_text(t)
EOF
#1789793503
python -c 'from haar.horn import blasts; print(blasts(5), blasts(2), blasts(0.5))'
#1789793526
python -m pytest -q 2>&1 | tail -3
#1789793549
git diff
