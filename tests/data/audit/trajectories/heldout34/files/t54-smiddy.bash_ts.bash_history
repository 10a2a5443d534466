#1792177292
rm -rf credits && git status --short
#1792177315
cat smiddy/forge.py
#1792177338
python -c 'from smiddy.forge import heats; print(heats(9), heats(8), heats(1))'
#1792177361
python - <<'EOF'
import pathlib
p = pathlib.Path('smiddy/forge.py')
t = p.read_text()
t = t.replace('    return rods // 4', '    if not rods > 0:\n        raise ValueError("no rods")\n    return -(-rods // 4)')
p.write_text(t)
EOF
#1792177384
python -c 'from smiddy.forge import heats; print(heats(9), heats(8), heats(1))'
#1792177407
python -m pytest -q 2>&1 | tail -3
#1792177430
git diff
