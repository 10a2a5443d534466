#1752894152
grep -rn --exclude=tags --exclude-dir=.git url_part .
#1752894175
cat fell/pages.py
#1752894198
python -c 'from fell.pages import url_part as s; print(s("Hello, World!"), s("?!"), s("Release Notes"))'
#1752894221
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
#1752894244
python -c 'from fell.pages import url_part as s; print(s("Hello, World!"), s("?!"), s("Release Notes"))'
#1752894267
python -m pytest -q 2>&1 | tail -3
#1752894290
git diff
