#1737511803
ls tests
#1737511826
python - <<'EOF'
import pathlib
p = pathlib.Path('marram/slug.py')
s = p.read_text()
s = s.replace('import re\n', 'import re\nimport unicodedata\n')
s = s.replace('    words = re.findall', '    title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()\n    words = re.findall')
p.write_text(s)
EOF
#1737511849
python -m pytest -q tests/test_slug.py
#1737511872
git diff
