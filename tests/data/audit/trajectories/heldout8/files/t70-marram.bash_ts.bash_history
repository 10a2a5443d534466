#1749405699
find .idea -name '*.xml'
#1749405722
cat marram/money.py
#1749405745
python -c 'from marram.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
#1749405768
python - <<'EOF'
import pathlib
p = pathlib.Path('marram/money.py')
s = p.read_text().replace('    return f"{cents // 100}.{cents % 100:02d}"',
    '    mag = abs(cents)\n'
    '    return ("-" if cents < 0 else "") + f"{mag // 100}.{mag % 100:02d}"')
p.write_text(s)
EOF
#1749405791
python -c 'from marram.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
#1749405814
python -m pytest -q 2>&1 | tail -3
#1749405837
git diff
