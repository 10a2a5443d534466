strings core.48213 | grep -A8 'def days_in_month'
python - <<'EOF'
import pathlib
p = pathlib.Path('ghyll/months.py')
p.write_text(p.read_text().replace('    return _DAYS[month - 1]', '    if month < 1 or month > 12:\n        raise ValueError("month must be 1 to 12")\n    if month == 2 and (year % 400 == 0 or (year % 4 == 0 and year % 100)):\n        return 29\n    return _DAYS[month - 1]'))
EOF
python -m pytest -q 2>&1 | tail -3
