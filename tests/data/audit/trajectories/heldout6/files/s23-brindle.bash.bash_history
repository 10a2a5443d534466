git clone -q --shared . /tmp/copy
cd /tmp/copy && python -m pytest -q; cd -
python - <<'EOF'
import pathlib
p = pathlib.Path('brindle/roman.py')
s = p.read_text()
s = s.replace('    return sum(VALUES[c] for c in numeral.upper())\n',
    '    vals = [VALUES[c] for c in numeral.upper()]\n'
    '    return sum(-v if i + 1 < len(vals) and v < vals[i + 1] else v for i, v in enumerate(vals))\n')
p.write_text(s)
EOF
python -m pytest -q
git diff
