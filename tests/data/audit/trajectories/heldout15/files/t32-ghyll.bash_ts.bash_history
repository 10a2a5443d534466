#1760512089
file core.48213
#1760512112
cat ghyll/months.py
#1760512135
python -c 'from ghyll.months import days_in_month as d; print(d(2024, 2), d(1900, 2), d(2000, 2))'
#1760512158
python - <<'EOF'
import pathlib
p = pathlib.Path('ghyll/months.py')
p.write_text(p.read_text().replace('    return _DAYS[month - 1]', '    if month < 1 or month > 12:\n        raise ValueError("month must be 1 to 12")\n    if month == 2 and (year % 400 == 0 or (year % 4 == 0 and year % 100)):\n        return 29\n    return _DAYS[month - 1]'))
EOF
#1760512181
python -c 'from ghyll.months import days_in_month as d; print(d(2024, 2), d(1900, 2), d(2000, 2))'
#1760512204
python -m pytest -q 2>&1 | tail -3
#1760512227
git diff
