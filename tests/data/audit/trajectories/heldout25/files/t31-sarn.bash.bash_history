ls
cat profile_output.txt
python - <<'EOF'
import pathlib
p = pathlib.Path('sarn/causeway.py')
t = p.read_text()
t = t.replace('    return axles * 1.50', '    if axles < 2 or hour < 0 or hour > 23:\n        raise ValueError("bad crossing")\n    rate = 0.75 if (hour >= 22 or hour < 6) else 1.50\n    return round(axles * rate, 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
