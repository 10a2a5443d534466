#1754951958
grep -rn -A7 'def parse_bool' loch
#1754951981
python - <<'EOF'
import pathlib
p = pathlib.Path('loch/flags.py')
old = '    return text == "true"\n'
new = '    value = text.strip().lower()\n    if value in ("true", "yes", "on", "1"):\n        return True\n    if value in ("false", "no", "off", "0"):\n        return False\n    raise ValueError("not a flag: " + repr(text))\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
#1754952004
python -m pytest -q 2>&1 | tail -3
