#1794265155
grep -o '"lines":"[^"]*"' .semgrep-out/pr-31.json
#1794265178
python - <<'EOF'
import pathlib
p = pathlib.Path('cruive/catch.py')
t = p.read_text()
t = t.replace('    return salmon // 8', '    if not salmon > 0:\n        raise ValueError("no salmon")\n    return -(-salmon // 8)')
p.write_text(t)
EOF
#1794265201
python -m pytest -q 2>&1 | tail -3
