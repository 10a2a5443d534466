#1762656566
diff -u bield/cuts.py bield/.rsync-partial/cuts.py
#1762656589
python - <<'EOF'
import pathlib
p = pathlib.Path('bield/cuts.py')
t = p.read_text()
t = t.replace('    minutes, secs = stamp.split(":")\n    return int(minutes) * 60 + int(secs)', '    fields = stamp.strip().split(":")\n    if len(fields) > 3 or len(fields) < 2 or not all(f.isdigit() for f in fields):\n        raise ValueError("expected MM:SS or H:MM:SS")\n    value = 0\n    for f in fields:\n        value = value * 60 + int(f)\n    return value')
p.write_text(t)
EOF
#1762656612
python -m pytest -q 2>&1 | tail -3
