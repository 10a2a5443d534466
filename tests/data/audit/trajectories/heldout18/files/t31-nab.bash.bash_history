ls nab/RCS
cat nab/RCS/dates.py,v
python - <<'EOF'
import pathlib
p = pathlib.Path('nab/dates.py')
t = p.read_text()
t = t.replace('    return month // 3 + 1', '    if month < 1 or month > 12:\n        raise ValueError("month out of range")\n    return (month + 2) // 3')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
