python - <<'EOF'
for line in open('tags'):
    if line.startswith('!'):
        continue
    name, path, pattern = line.split('\t')[:3]
    print(name, path, pattern)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('fell/pages.py')
s = p.read_text().replace(
    '    return text.lower().replace(" ", "-")',
    '    words = re.findall(r"[a-z0-9]+", text.lower())\n'
    '    return "-".join(words) if words else "untitled"',
)
p.write_text(s.replace('"""\n\n', '"""\n\nimport re\n', 1))
EOF
python -m pytest -q 2>&1 | tail -3
