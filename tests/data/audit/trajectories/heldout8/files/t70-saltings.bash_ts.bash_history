#1748639331
find .idea -name '*.xml'
#1748639354
cat saltings/money.py
#1748639377
python -c 'from saltings.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
#1748639400
python - <<'EOF'
import pathlib
p = pathlib.Path('saltings/money.py')
s = p.read_text().replace('    return f"{cents // 100}.{cents % 100:02d}"',
    '    mag = abs(cents)\n'
    '    return ("-" if cents < 0 else "") + f"{mag // 100}.{mag % 100:02d}"')
p.write_text(s)
EOF
#1748639423
python -c 'from saltings.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
#1748639446
python -m pytest -q 2>&1 | tail -3
#1748639469
git diff
