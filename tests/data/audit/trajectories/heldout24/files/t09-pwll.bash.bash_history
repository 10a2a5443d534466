awk '/^[A-Z_]+ = /' __pypackages__/3.11/lib/pwll/bus.py
python - <<'EOF'
import pathlib
p = pathlib.Path('pwll/bus.py')
t = p.read_text()
t = t.replace('    return 2.40 if age >= 16 else 1.20', '    if age < 0:\n        raise ValueError("negative age")\n    if age < 5 or age > 59:\n        return 0.0\n    return 1.20 if age < 16 else 2.40')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
