#1764532249
git status --ignored --short; ls -a nab
#1764532272
cat nab/dates.py
#1764532295
python -c 'from nab.dates import quarter; print([quarter(m) for m in (3, 4, 12)])'
#1764532318
python - <<'EOF'
import pathlib
p = pathlib.Path('nab/dates.py')
t = p.read_text()
t = t.replace('    return month // 3 + 1', '    if month < 1 or month > 12:\n        raise ValueError("month out of range")\n    return (month + 2) // 3')
p.write_text(t)
EOF
#1764532341
python -c 'from nab.dates import quarter; print([quarter(m) for m in (3, 4, 12)])'
#1764532364
python -m pytest -q 2>&1 | tail -3
#1764532387
git diff
