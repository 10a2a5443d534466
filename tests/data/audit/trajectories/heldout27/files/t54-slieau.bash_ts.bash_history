#1782048648
unzip -l codeql-db/src.zip
#1782048671
cat slieau/walk.py
#1782048694
python -c 'from slieau.walk import minutes; print(minutes(5, 600), minutes(2.5), minutes(3, 250))'
#1782048717
python - <<'EOF'
import pathlib
p = pathlib.Path('slieau/walk.py')
t = p.read_text()
t = t.replace('    return int(distance_km * 12)', '    if min(distance_km, climb_m) < 0:\n        raise ValueError("negative walk")\n    return round(12 * distance_km + 0.1 * climb_m)')
p.write_text(t)
EOF
#1782048740
python -c 'from slieau.walk import minutes; print(minutes(5, 600), minutes(2.5), minutes(3, 250))'
#1782048763
python -m pytest -q 2>&1 | tail -3
#1782048786
git diff
