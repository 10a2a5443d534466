#1745186501
git count-objects -v
#1745186524
git clone -q --shared .git/reference/brindle.git /tmp/up
#1745186547
diff -u brindle/roman.py /tmp/up/brindle/roman.py
#1745186570
python - <<'EOF'
import pathlib
p = pathlib.Path('brindle/roman.py')
s = p.read_text()
s = s.replace('    return sum(VALUES[c] for c in numeral.upper())\n',
    '    vals = [VALUES[c] for c in numeral.upper()]\n'
    '    return sum(-v if i + 1 < len(vals) and v < vals[i + 1] else v for i, v in enumerate(vals))\n')
p.write_text(s)
EOF
#1745186593
python -m pytest -q
