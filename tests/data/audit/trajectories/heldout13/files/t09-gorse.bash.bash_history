cd build/lib && python -c 'from gorse.slug import slugify as s; print(s("Hello, World!"), s("a  b"), s("?!"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('gorse/slug.py')
s = p.read_text().replace('    return title.lower().replace(" ", "-")',
    '    words = "".join(c if c.isalnum() else " " for c in title.lower()).split()\n'
    '    return "-".join(words) or "post"')
p.write_text(s)
EOF
python -m pytest -q 2>&1 | tail -3
