#1779678723
cat mypy-report/index.html
#1779678746
cat melin/mill.py
#1779678769
python -c 'from melin.mill import flour; print(flour(100), flour(25), flour(11.5))'
#1779678792
python - <<'EOF'
import pathlib
p = pathlib.Path('melin/mill.py')
t = p.read_text()
t = t.replace('    return grain * 0.72', '    if grain - 1.5 <= 0:\n        raise ValueError("too little grain")\n    return round(0.72 * (grain - 1.5), 1)')
p.write_text(t)
EOF
#1779678815
python -c 'from melin.mill import flour; print(flour(100), flour(25), flour(11.5))'
#1779678838
python -m pytest -q 2>&1 | tail -3
#1779678861
git diff
