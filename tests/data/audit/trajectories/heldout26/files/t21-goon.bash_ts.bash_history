#1780058026
python - <<'EOF' | git apply
import pathlib
rows = pathlib.Path('upstream.diffoscope.txt').read_text().splitlines()
patch, top = [], ''
for r in rows:
    if r.startswith('├── '):
        top = r[4:]
    elif r.startswith('│ ├── '):
        name = top + '/' + r[6:]
        patch += ['--- a/' + name, '+++ b/' + name]
    elif r.startswith('│ │'):
        patch.append(r[4:] or ' ')
print('\n'.join(patch))
EOF
#1780058049
python -m pytest -q 2>&1 | tail -3
#1780058072
git diff
