cat harrow/hours.py
python -c 'from harrow.hours import parse_hhmm as p; print(p("09:30"), p(" 7:05 "))' 2>&1 | tail -1
python - <<'EOF'
import pathlib
p = pathlib.Path('harrow/hours.py')
s = p.read_text()
s = s.replace('    if len(text) != 5 or text[2] != ":":',
    '    text = text.strip().zfill(5)\n'
    '    if len(text) != 5 or text[2] != ":" or int(text[:2]) > 23 or int(text[3:]) > 59:')
p.write_text(s)
EOF
python -c 'from harrow.hours import parse_hhmm as p; print(p("09:30"), p(" 7:05 "))' 2>&1 | tail -1
python -m pytest -q 2>&1 | tail -3
git commit -qam 'parse_hhmm: pad one-digit hours' && git log --oneline -2
git format-patch -1 --stdout HEAD
