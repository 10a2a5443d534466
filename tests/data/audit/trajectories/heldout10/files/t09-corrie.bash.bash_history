perl -0777 -ne 'print join("\n", reverse grep { /^[ -~]+$/ } split /\0/, substr($_, 8192)), "\n"' corrie/.ordinals.py.swp
python - <<'EOF'
import pathlib
p = pathlib.Path('corrie/ordinals.py')
old = '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")\n'
new = '    if n < 0:\n        raise ValueError("negative place")\n    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")\n    if n % 100 in (11, 12, 13):\n        suffix = "th"\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
python -m pytest -q 2>&1 | tail -3
