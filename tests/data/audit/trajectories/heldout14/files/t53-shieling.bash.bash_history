python -c 'import runpy; ns = runpy.run_path("shieling/clock.sync-conflict-20241220-101532-Q3ZKT7B.py"); print(ns["add_minutes"]("23:50", 20), ns["add_minutes"]("9:05", 0))'
python - <<'EOF'
import pathlib
p = pathlib.Path('shieling/clock.py')
p.write_text(p.read_text().replace('    hours, mins = hhmm.split(":")\n    total = int(hours) * 60 + int(mins) + minutes\n    return f"{total // 60}:{total % 60}"', '    h, sep, m = hhmm.partition(":")\n    if not sep or not (h.isdigit() and m.isdigit()) or int(h) > 23 or int(m) > 59:\n        raise ValueError("expected HH:MM")\n    total = (int(h) * 60 + int(m) + minutes) % 1440\n    return "%02d:%02d" % divmod(total, 60)'))
EOF
python -m pytest -q 2>&1 | tail -3
