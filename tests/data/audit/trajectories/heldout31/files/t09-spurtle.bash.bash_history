python - <<'EOF'
import pathlib
for rep in sorted(pathlib.Path('cgitb').glob('*.txt')):
    frames = rep.read_text().split('\n\n')
    for frame in frames:
        if 'porridge.py in' in frame:
            print('##', rep.name)
            print(frame)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('spurtle/porridge.py')
t = p.read_text()
t = t.replace('    return servings * 45 // 30', '    if not servings > 0:\n        raise ValueError("no servings")\n    return -(-servings * 45 // 30)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
