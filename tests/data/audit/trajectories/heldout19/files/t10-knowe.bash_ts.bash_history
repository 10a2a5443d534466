#1766686684
wc -l hardcopy.*
#1766686707
cat knowe/times.py
#1766686730
python -c 'from knowe.times import naismith as n; print(n(10, 600), n(2.5, 55))'
#1766686753
python - <<'EOF'
import pathlib
p = pathlib.Path('knowe/times.py')
t = p.read_text()
t = t.replace('    return int(km * 12)', '    if min(km, ascent_m) < 0:\n        raise ValueError("negative distance or ascent")\n    minutes = km * 12.0 + ascent_m * 0.1\n    return int(minutes + 0.5)')
p.write_text(t)
EOF
#1766686776
python -c 'from knowe.times import naismith as n; print(n(10, 600), n(2.5, 55))'
#1766686799
python -m pytest -q 2>&1 | tail -3
#1766686822
git diff
