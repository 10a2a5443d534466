#1765116448
sed -n '/^log/,$p' nab/RCS/dates.py,v | head -n 14
#1765116471
python - <<'EOF'
import pathlib
p = pathlib.Path('nab/dates.py')
t = p.read_text()
t = t.replace('    return month // 3 + 1', '    if month < 1 or month > 12:\n        raise ValueError("month out of range")\n    return (month + 2) // 3')
p.write_text(t)
EOF
#1765116494
python -m pytest -q 2>&1 | tail -3
