zipgrep -n CLIMB codeql-db/src.zip
python - <<'EOF'
import pathlib
p = pathlib.Path('slieau/walk.py')
t = p.read_text()
t = t.replace('    return int(distance_km * 12)', '    if min(distance_km, climb_m) < 0:\n        raise ValueError("negative walk")\n    return round(12 * distance_km + 0.1 * climb_m)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
