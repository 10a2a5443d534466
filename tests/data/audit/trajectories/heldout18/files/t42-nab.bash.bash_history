grep -rn --exclude-dir=RCS --exclude-dir=.git quarter .
cat nab/dates.py
python -c 'from nab.dates import quarter; print([quarter(m) for m in (3, 4, 12)])'
python - <<'EOF'
import pathlib
p = pathlib.Path('nab/dates.py')
t = p.read_text()
t = t.replace('    return month // 3 + 1', '    if month < 1 or month > 12:\n        raise ValueError("month out of range")\n    return (month + 2) // 3')
p.write_text(t)
EOF
python -c 'from nab.dates import quarter; print([quarter(m) for m in (3, 4, 12)])'
python -m pytest -q 2>&1 | tail -3
git diff
