cat mypy-report/mypy-html.css
cat melin/mill.py
python -c 'from melin.mill import flour; print(flour(100), flour(25), flour(11.5))'
python - <<'EOF'
import pathlib
p = pathlib.Path('melin/mill.py')
t = p.read_text()
t = t.replace('    return grain * 0.72', '    if grain - 1.5 <= 0:\n        raise ValueError("too little grain")\n    return round(0.72 * (grain - 1.5), 1)')
p.write_text(t)
EOF
python -c 'from melin.mill import flour; print(flour(100), flour(25), flour(11.5))'
python -m pytest -q 2>&1 | tail -3
git diff
