#1783597567
sqlite3 haaf.srctrldb 'select serialized_name from node where type = 8'
#1783597590
cat haaf/bait.py
#1783597613
python -c 'from haaf.bait import bait_kg; print(bait_kg(120), bait_kg(100), bait_kg(0))'
#1783597636
python - <<'EOF'
import pathlib
p = pathlib.Path('haaf/bait.py')
t = p.read_text()
t = t.replace('    return hooks / 40', '    if not hooks >= 0:\n        raise ValueError("negative hooks")\n    return 1 - (-hooks // 40)')
p.write_text(t)
EOF
#1783597659
python -c 'from haaf.bait import bait_kg; print(bait_kg(120), bait_kg(100), bait_kg(0))'
#1783597682
python -m pytest -q 2>&1 | tail -3
#1783597705
git diff
