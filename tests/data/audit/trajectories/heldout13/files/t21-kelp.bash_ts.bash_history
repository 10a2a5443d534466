#1754070000
grep -rn -A9 'def parse_size' kelp
#1754070023
python - <<'EOF'
import pathlib
p = pathlib.Path('kelp/sizes.py')
s = p.read_text().replace(
    '    digits = "".join(c for c in text if c.isdigit())\n    return int(digits)',
    '    t = text.strip().lower()\n'
    '    for suffix, mult in (("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)):\n'
    '        if t.endswith(suffix):\n'
    '            return int(t[: -len(suffix)]) * mult\n'
    '    return int(t)')
p.write_text(s)
EOF
#1754070046
python -m pytest -q 2>&1 | tail -3
