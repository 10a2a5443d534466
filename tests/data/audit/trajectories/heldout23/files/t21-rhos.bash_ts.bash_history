#1773889991
python - <<'EOF'
import pathlib
lines = pathlib.Path('.flake8.log').read_text().splitlines()
for head, src in zip(lines[::3], lines[1::3]):
    print(head.split(':')[0], '|', src)
EOF
#1773890014
python - <<'EOF'
import pathlib
p = pathlib.Path('rhos/hedge.py')
t = p.read_text()
t = t.replace('    """Whips for a hedge of metres."""', '    """Whips for a hedge of metres in rows: a part metre still needs its whips, so round up."""')
t = t.replace('    return int(metres * 5 * rows)', '    if rows < 1 or metres <= 0:\n        raise ValueError(f"a hedge needs a length and at least one row: {metres}, {rows}")\n    return -(-round(metres * 5, 6) // 1) * rows')
p.write_text(t)
EOF
#1773890037
python -m pytest -q 2>&1 | tail -3
#1773890060
git diff
