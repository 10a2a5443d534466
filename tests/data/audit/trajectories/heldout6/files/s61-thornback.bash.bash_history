git for-each-ref refs/bundles
git log -p -1 refs/bundles/main -- thornback/luhn.py
python - <<'EOF'
import pathlib
p = pathlib.Path('thornback/luhn.py')
s = p.read_text()
s = s.replace('int(c) for c in number]', 'int(c) for c in number.replace(" ", "")]')
s = s.replace('enumerate(digits):', 'enumerate(digits[::-1]):').replace('i % 2 == 0:', 'i % 2 == 1:')
p.write_text(s)
EOF
python -m pytest -q
