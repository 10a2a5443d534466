#1756171129
cat patches/series .pc/.quilt_series .pc/.version
#1756171152
cat combe/ranges.py
#1756171175
python -c 'from combe.ranges import parse_ranges as p; print(p("1-3,5"), p("4-6, 5"))'
#1756171198
python - <<'EOF'
import pathlib
p = pathlib.Path('combe/ranges.py')
p.write_text(p.read_text().replace('    pages = []\n    for part in text.split(","):\n        start, _, end = part.partition("-")\n        pages.extend(range(int(start), int(end or start) + 1))\n    return pages', '    wanted = set()\n    for chunk in text.split(","):\n        chunk = chunk.strip()\n        if not chunk:\n            continue\n        a, _, b = chunk.partition("-")\n        a, b = int(a), int(b or a)\n        if b < a:\n            raise ValueError("range runs backwards")\n        wanted |= set(range(a, b + 1))\n    return sorted(wanted)'))
EOF
#1756171221
python -c 'from combe.ranges import parse_ranges as p; print(p("1-3,5"), p("4-6, 5"))'
#1756171244
python -m pytest -q 2>&1 | tail -3
#1756171267
git diff
