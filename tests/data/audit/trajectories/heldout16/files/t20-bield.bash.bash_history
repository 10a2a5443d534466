rm -rf bield/.rsync-partial .rsync-partial
cat bield/cuts.py
python -c 'from bield.cuts import seconds as s; print(s("02:05"), s("1:02:03"), s(" 0:07 "))'
python - <<'EOF'
import pathlib
p = pathlib.Path('bield/cuts.py')
t = p.read_text()
t = t.replace('    minutes, secs = stamp.split(":")\n    return int(minutes) * 60 + int(secs)', '    fields = stamp.strip().split(":")\n    if len(fields) > 3 or len(fields) < 2 or not all(f.isdigit() for f in fields):\n        raise ValueError("expected MM:SS or H:MM:SS")\n    value = 0\n    for f in fields:\n        value = value * 60 + int(f)\n    return value')
p.write_text(t)
EOF
python -c 'from bield.cuts import seconds as s; print(s("02:05"), s("1:02:03"), s(" 0:07 "))'
python -m pytest -q 2>&1 | tail -3
git diff
