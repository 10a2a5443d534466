#1772668980
python - <<'EOF'
import xml.etree.ElementTree as ET
text = ET.parse('reports/junit.xml').find('.//failure').text
lines = text.split('\n')
start = next(i for i, x in enumerate(lines) if x.lstrip().startswith('def celsius'))
end = next(i for i, x in enumerate(lines) if x.startswith('E '))
func = ''.join(x[4:] + '\n' for x in lines[start:end])
import pathlib
p = pathlib.Path('nant/convert.py')
head = p.read_text().split('def celsius', 1)[0]
p.write_text(head.rstrip('\n') + '\n\nABSOLUTE_ZERO_F = -459.67\n\n\n' + func)
EOF
#1772669003
python -m pytest -q 2>&1 | tail -3
#1772669026
git diff
