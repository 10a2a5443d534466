#1766747662
python - <<'EOF'
import pathlib, re
text = pathlib.Path('dene/fares.c').read_text()
body = [re.sub(r' +# <+$', '', x[3:]) for x in text.splitlines() if x.endswith('# <<<<<<<<<<<<<<')]
code = 'def fare(miles):\n' + '\n'.join(body) + '\n'
p = pathlib.Path('dene/fares.py')
t = p.read_text()
p.write_text(t.split('def fare')[0] + code.replace('def fare(miles):', 'def fare(miles: float) -> float:'))
EOF
#1766747685
python -m pytest -q 2>&1 | tail -3
#1766747708
git diff
