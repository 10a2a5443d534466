#1755787275
xxd -l 64 corrie/.ordinals.py.swp
#1755787298
cat corrie/ordinals.py
#1755787321
python -c 'from corrie.ordinals import ordinal; print([ordinal(n) for n in (1, 2, 3, 11, 12, 13, 21, 112)])'
#1755787344
python - <<'EOF'
import pathlib
p = pathlib.Path('corrie/ordinals.py')
old = '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")\n'
new = '    if n < 0:\n        raise ValueError("negative place")\n    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")\n    if n % 100 in (11, 12, 13):\n        suffix = "th"\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
#1755787367
python -c 'from corrie.ordinals import ordinal; print([ordinal(n) for n in (1, 2, 3, 11, 12, 13, 21, 112)])'
#1755787390
python -m pytest -q 2>&1 | tail -3
#1755787413
git diff
