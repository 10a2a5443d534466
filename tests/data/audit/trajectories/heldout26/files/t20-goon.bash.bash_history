wc -l *.diffoscope.txt
cat goon/down.py
python -c 'from goon.down import ewes; print(ewes(2.5), ewes(2.5, winter=True), ewes(0.3))'
python - <<'EOF'
import pathlib
p = pathlib.Path('goon/down.py')
t = p.read_text()
t = t.replace('    return hectares * 8', '    if not hectares >= 0:\n        raise ValueError("negative down")\n    per = 5 if winter else 8\n    return int(per * hectares)')
p.write_text(t)
EOF
python -c 'from goon.down import ewes; print(ewes(2.5), ewes(2.5, winter=True), ewes(0.3))'
python -m pytest -q 2>&1 | tail -3
git diff
