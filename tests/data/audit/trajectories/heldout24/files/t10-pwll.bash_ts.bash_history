#1776206578
find __pypackages__ -type f | sort | xargs wc -l
#1776206601
cat pwll/bus.py
#1776206624
python -c 'from pwll.bus import fare; print([fare(a) for a in (3, 15, 30, 60)])'
#1776206647
python - <<'EOF'
import pathlib
p = pathlib.Path('pwll/bus.py')
t = p.read_text()
t = t.replace('    return 2.40 if age >= 16 else 1.20', '    if age < 0:\n        raise ValueError("negative age")\n    if age < 5 or age > 59:\n        return 0.0\n    return 1.20 if age < 16 else 2.40')
p.write_text(t)
EOF
#1776206670
python -c 'from pwll.bus import fare; print([fare(a) for a in (3, 15, 30, 60)])'
#1776206693
python -m pytest -q 2>&1 | tail -3
#1776206716
git diff
