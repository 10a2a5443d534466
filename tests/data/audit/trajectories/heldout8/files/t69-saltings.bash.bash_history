git check-ignore -v .idea
rm -rf .idea/shelf
cat saltings/money.py
python -c 'from saltings.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
python - <<'EOF'
import pathlib
p = pathlib.Path('saltings/money.py')
s = p.read_text().replace('    return f"{cents // 100}.{cents % 100:02d}"',
    '    mag = abs(cents)\n'
    '    return ("-" if cents < 0 else "") + f"{mag // 100}.{mag % 100:02d}"')
p.write_text(s)
EOF
python -c 'from saltings.money import format_cents as f; print(f(-5), f(-1234), f(1234))'
python -m pytest -q 2>&1 | tail -3
git diff
