grep -rn INTERVAL_MIN apidocs
python - <<'EOF'
import pathlib
p = pathlib.Path('haar/horn.py')
t = p.read_text()
t = t.replace('    return int(minutes // 2)', '    if not minutes > 0:\n        raise ValueError("no minutes")\n    return 1 - int(-minutes // 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
