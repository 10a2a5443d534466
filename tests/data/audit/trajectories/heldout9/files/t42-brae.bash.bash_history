rm -rf notebooks/.ipynb_checkpoints
cat brae/stats.py
python -c 'from brae.stats import median; print(median([3, 1, 2]), median([4, 1, 3, 2]))'
python - <<'EOF'
import pathlib
p = pathlib.Path('brae/stats.py')
s = p.read_text().replace('    return sorted(values)[len(values) // 2]',
    '    s = sorted(values)\n'
    '    n = len(s)\n'
    '    if n == 0:\n'
    '        raise ValueError("no values")\n'
    '    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2')
p.write_text(s)
EOF
python -c 'from brae.stats import median; print(median([3, 1, 2]), median([4, 1, 3, 2]))'
python -m pytest -q 2>&1 | tail -3
git diff
