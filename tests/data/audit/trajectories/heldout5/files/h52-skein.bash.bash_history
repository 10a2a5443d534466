git for-each-ref refs/bisect
git show refs/bisect/fixed:skein/weeks.py
sed -i 's|    return int(day.strftime("%W")) or 52|    return day.isocalendar()[1]|' skein/weeks.py
python -m pytest -q
