python - <<'EOF'
for line in open('ci-artifacts/lint-pr-21-1204/black.diff'):
    if line.startswith('-') and not line.startswith('---'):
        print(line[1:], end='')
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('skep/honey.py')
t = p.read_text()
t = t.replace('    return grams // 454', '    if not grams > 0:\n        raise ValueError("no honey")\n    return -(-grams // 454)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
