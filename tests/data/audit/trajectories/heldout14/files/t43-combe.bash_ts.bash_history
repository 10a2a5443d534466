#1756579105
grep -rn -A9 'def parse_ranges' .
#1756579128
python - <<'EOF'
import pathlib
p = pathlib.Path('combe/ranges.py')
p.write_text(p.read_text().replace('    pages = []\n    for part in text.split(","):\n        start, _, end = part.partition("-")\n        pages.extend(range(int(start), int(end or start) + 1))\n    return pages', '    wanted = set()\n    for chunk in text.split(","):\n        chunk = chunk.strip()\n        if not chunk:\n            continue\n        a, _, b = chunk.partition("-")\n        a, b = int(a), int(b or a)\n        if b < a:\n            raise ValueError("range runs backwards")\n        wanted |= set(range(a, b + 1))\n    return sorted(wanted)'))
EOF
#1756579151
python -m pytest -q 2>&1 | tail -3
