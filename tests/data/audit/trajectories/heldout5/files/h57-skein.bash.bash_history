cat .git/BISECT_START
git bisect reset
sed -i 's|    return int(day.strftime("%W")) or 52|    return day.isocalendar()[1]|' skein/weeks.py
python -m pytest -q
