git clean -ndX
rm -v loch/*_30112.py loch/flags.py.orig
cat loch/flags.py
python -c 'from loch.flags import parse_bool as p; print(p("true"), p("yes"), p(" OFF "))'
python - <<'EOF'
import pathlib
p = pathlib.Path('loch/flags.py')
old = '    return text == "true"\n'
new = '    value = text.strip().lower()\n    if value in ("true", "yes", "on", "1"):\n        return True\n    if value in ("false", "no", "off", "0"):\n        return False\n    raise ValueError("not a flag: " + repr(text))\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
python -c 'from loch.flags import parse_bool as p; print(p("true"), p("yes"), p(" OFF "))'
python -m pytest -q 2>&1 | tail -3
git diff
