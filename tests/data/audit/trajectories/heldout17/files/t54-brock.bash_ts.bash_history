#1763228515
grep -rn split_evenly . --exclude-dir=.git
#1763228538
cat brock/split.py
#1763228561
python -c 'from brock.split import split_evenly as s; print(s(10, 3), s(2, 4))'
#1763228584
python - <<'EOF'
import pathlib
p = pathlib.Path('brock/split.py')
t = p.read_text()
t = t.replace('    return [total // parts] * parts', '    if parts <= 0:\n        raise ValueError("parts must be positive")\n    shares = [total // parts] * parts\n    for i in range(total % parts):\n        shares[i] += 1\n    return shares')
p.write_text(t)
EOF
#1763228607
python -c 'from brock.split import split_evenly as s; print(s(10, 3), s(2, 4))'
#1763228630
python -m pytest -q 2>&1 | tail -3
#1763228653
git diff
