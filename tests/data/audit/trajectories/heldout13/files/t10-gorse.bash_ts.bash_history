#1753659225
python -c 'import gorse.slug as m; print(m.__file__)'
#1753659248
cat gorse/slug.py
#1753659271
python -c 'from gorse.slug import slugify as s; print(s("Hello, World!"), s("a  b"))'
#1753659294
python - <<'EOF'
import pathlib
p = pathlib.Path('gorse/slug.py')
s = p.read_text().replace('    return title.lower().replace(" ", "-")',
    '    words = "".join(c if c.isalnum() else " " for c in title.lower()).split()\n'
    '    return "-".join(words) or "post"')
p.write_text(s)
EOF
#1753659317
python -c 'from gorse.slug import slugify as s; print(s("Hello, World!"), s("a  b"))'
#1753659340
python -m pytest -q 2>&1 | tail -3
#1753659363
git diff
