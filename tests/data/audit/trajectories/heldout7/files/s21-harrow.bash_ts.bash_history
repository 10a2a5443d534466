#1745132680
git tag -l
#1745132703
git describe --tags
#1745132726
cat harrow/hours.py
#1745132749
python -c 'from harrow.hours import parse_hhmm as p; print(p("09:30"), p(" 7:05 "))' 2>&1 | tail -1
#1745132772
python - <<'EOF'
import pathlib
p = pathlib.Path('harrow/hours.py')
s = p.read_text()
s = s.replace('    if len(text) != 5 or text[2] != ":":',
    '    text = text.strip().zfill(5)\n'
    '    if len(text) != 5 or text[2] != ":" or int(text[:2]) > 23 or int(text[3:]) > 59:')
p.write_text(s)
EOF
#1745132795
python -c 'from harrow.hours import parse_hhmm as p; print(p("09:30"), p(" 7:05 "))' 2>&1 | tail -1
#1745132818
python -m pytest -q 2>&1 | tail -3
#1745132841
git diff
