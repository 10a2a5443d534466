#1789946951
python - <<'EOF'
import json
for row in map(json.loads, open('reports/pr-14-tests.jsonl')):
    if row.get('outcome') == 'failed':
        print(row['longrepr']['reprcrash']['message'])
EOF
#1789946974
cat bannock/griddle.py
#1789946997
python -c 'from bannock.griddle import batches; print(batches(7), batches(6), batches(1))'
#1789947020
python - <<'EOF'
import pathlib
p = pathlib.Path('bannock/griddle.py')
t = p.read_text()
t = t.replace('    return cakes // 6', '    if not cakes > 0:\n        raise ValueError("no cakes")\n    return -(-cakes // 6)')
p.write_text(t)
EOF
#1789947043
python -c 'from bannock.griddle import batches; print(batches(7), batches(6), batches(1))'
#1789947066
python -m pytest -q 2>&1 | tail -3
#1789947089
git diff
