grep -B11 ValueError credits/pr-9.blame
python - <<'EOF'
import pathlib
p = pathlib.Path('smiddy/forge.py')
t = p.read_text()
t = t.replace('    return rods // 4', '    if not rods > 0:\n        raise ValueError("no rods")\n    return -(-rods // 4)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
