grep -rn 'parse_duration\|findall' skerry
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
python -m pytest -q 2>&1 | tail -3
