python - <<'EOF'
import glob
for name in sorted(glob.glob('.hypothesis/patches/*.patch')):
    for line in open(name):
        if line.startswith(' '):
            print(line[1:], end='')
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('tusker/cart.py')
t = p.read_text()
t = t.replace('    return peats // 40', '    if not peats > 0:\n        raise ValueError("no peats")\n    return -(-peats // 40)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
