#1747306547
find . -name '*.rej' -o -name '*.orig' | xargs rm -f
#1747306570
cat culvert/slugs.py
#1747306593
python -c 'from culvert.slugs import slugify as s; print(s("Crème Brûlée"), s("Rock & Roll"), s("Hello World"))'
#1747306616
python - <<'EOF'
import pathlib
p = pathlib.Path('culvert/slugs.py')
s = p.read_text().replace('    return "-".join(title.lower().split(" "))',
    '    bare = "".join(c for c in unicodedata.normalize("NFKD", title) '
    'if not unicodedata.combining(c))\n'
    '    words = "".join(c if c.isalnum() and c.isascii() else " " '
    'for c in bare.lower()).split()\n'
    '    return "-".join(words)')
s = s.replace('"""\n\n', '"""\n\nimport unicodedata\n', 1)
p.write_text(s)
EOF
#1747306639
python -c 'from culvert.slugs import slugify as s; print(s("Crème Brûlée"), s("Rock & Roll"), s("Hello World"))'
#1747306662
python -m pytest -q 2>&1 | tail -3
#1747306685
git diff
