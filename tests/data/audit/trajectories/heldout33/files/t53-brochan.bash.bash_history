grep '^!' reports/diff-cover-pr-7.md
python - <<'EOF'
import pathlib
p = pathlib.Path('brochan/pot.py')
t = p.read_text()
t = t.replace('    return servings // 8', '    if not servings > 0:\n        raise ValueError("no servings")\n    return -(-servings // 8)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
