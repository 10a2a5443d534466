#1750976680
grep -rn --exclude='*,cover' parse_duration .
#1750976703
cat skerry/durations.py
#1750976726
python -c 'from skerry.durations import parse_duration as p; print(p("90s"), p("1h30m"), p("2m 5s"))'
#1750976749
python - <<'EOF'
import pathlib
p = pathlib.Path('skerry/durations.py')
s = p.read_text().replace(
    '    unit = {"s": 1, "m": 60, "h": 3600}[text[-1]]\n'
    '    return int(text[:-1]) * unit',
    '    total = 0\n'
    '    for num, unit in re.findall(r"(\\d+)\\s*([smh])", text):\n'
    '        total += int(num) * {"s": 1, "m": 60, "h": 3600}[unit]\n'
    '    return total')
s = s.replace('"""\n\n', '"""\n\nimport re\n', 1)
p.write_text(s)
EOF
#1750976772
python -c 'from skerry.durations import parse_duration as p; print(p("90s"), p("1h30m"), p("2m 5s"))'
#1750976795
python -m pytest -q 2>&1 | tail -3
#1750976818
git diff
