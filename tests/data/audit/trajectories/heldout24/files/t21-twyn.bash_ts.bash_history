#1776168461
python - <<'EOF'
import pathlib
lines = pathlib.Path('.virtual_documents/walk_scratch.ipynb').read_text().splitlines()
start = lines.index('def minutes(text: str) -> int:')
end = next(i for i in range(start + 1, len(lines)) if lines[i] and lines[i][0] != ' ')
func = ''.join(x + '\n' for x in lines[start:end]).rstrip('\n') + '\n'
top = next(x for x in lines if x.startswith('_PART = '))
p = pathlib.Path('twyn/walk.py')
head = p.read_text().split('def minutes', 1)[0].rstrip('\n')
p.write_text(head + '\n\nimport re\n\n' + top + '\n\n\n' + func)
EOF
#1776168484
python -m pytest -q 2>&1 | tail -3
#1776168507
git diff
