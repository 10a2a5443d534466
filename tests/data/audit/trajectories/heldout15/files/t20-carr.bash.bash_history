rm -f DEADJOE
cat carr/stats.py
python -c 'from carr.stats import mode; print(mode([3, 1, 3, 1]), mode(iter([2, 2])))'
python - <<'EOF'
import pathlib
p = pathlib.Path('carr/stats.py')
p.write_text(p.read_text().replace('    return max(values, key=values.count)', '    tally: dict[int, int] = {}\n    for v in values:\n        tally[v] = tally.get(v, 0) + 1\n    if not tally:\n        raise ValueError("no values")\n    best = max(tally.values())\n    return min(v for v in tally if tally[v] == best)'))
EOF
python -c 'from carr.stats import mode; print(mode([3, 1, 3, 1]), mode(iter([2, 2])))'
python -m pytest -q 2>&1 | tail -3
git diff
