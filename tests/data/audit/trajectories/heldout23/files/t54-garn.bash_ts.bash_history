#1773875236
wc -l dead.letter
#1773875259
cat garn/fence.py
#1773875282
python -c 'from garn.fence import posts; print(posts(10), posts(11), posts(0))'
#1773875305
python - <<'EOF'
import pathlib
p = pathlib.Path('garn/fence.py')
t = p.read_text()
t = t.replace('    return int(length / gap)', '    if length < 0 or not gap > 0:\n        raise ValueError("bad fence")\n    spans = -(-round(length / gap, 6) // 1)\n    return int(spans) + 1')
p.write_text(t)
EOF
#1773875328
python -c 'from garn.fence import posts; print(posts(10), posts(11), posts(0))'
#1773875351
python -m pytest -q 2>&1 | tail -3
#1773875374
git diff
