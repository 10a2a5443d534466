cat slides/_minted-handout/*.pygtex
cat thole/row.py
python -c 'from thole.row import strokes; print(strokes(10), strokes(3), strokes(0.5))'
python - <<'EOF'
import pathlib
p = pathlib.Path('thole/row.py')
t = p.read_text()
t = t.replace('    return int(metres // 3)', '    if not metres > 0:\n        raise ValueError("no water")\n    return 2 - int(-metres // 3)')
p.write_text(t)
EOF
python -c 'from thole.row import strokes; print(strokes(10), strokes(3), strokes(0.5))'
python -m pytest -q 2>&1 | tail -3
git diff
