#1757699513
grep -rn --exclude='*.sync-conflict-*' --exclude-dir=.git add_minutes .
#1757699536
cat shieling/clock.py
#1757699559
python -c 'from shieling.clock import add_minutes as a; print(a("10:15", 30), a("23:50", 20), a("9:05", 0))'
#1757699582
python - <<'EOF'
import pathlib
p = pathlib.Path('shieling/clock.py')
p.write_text(p.read_text().replace('    hours, mins = hhmm.split(":")\n    total = int(hours) * 60 + int(mins) + minutes\n    return f"{total // 60}:{total % 60}"', '    h, sep, m = hhmm.partition(":")\n    if not sep or not (h.isdigit() and m.isdigit()) or int(h) > 23 or int(m) > 59:\n        raise ValueError("expected HH:MM")\n    total = (int(h) * 60 + int(m) + minutes) % 1440\n    return "%02d:%02d" % divmod(total, 60)'))
EOF
#1757699605
python -c 'from shieling.clock import add_minutes as a; print(a("10:15", 30), a("23:50", 20), a("9:05", 0))'
#1757699628
python -m pytest -q 2>&1 | tail -3
#1757699651
git diff
