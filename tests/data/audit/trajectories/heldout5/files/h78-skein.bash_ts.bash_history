#1739681741
git status
#1739681764
git bisect broken
#1739681787
cat skein/weeks.py
#1739681810
git bisect reset
#1739681833
sed -i 's|    return int(day.strftime("%W")) or 52|    return day.isocalendar()[1]|' skein/weeks.py
