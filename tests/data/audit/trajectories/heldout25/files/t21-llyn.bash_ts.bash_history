#1778364360
python - <<'EOF'
import pathlib, re
chat = pathlib.Path('.aider.chat.history.md').read_text()
blocks = re.findall(r'^(\S+)\n```python\n<<<<<<< SEARCH\n(.*?)^=======\n(.*?)^>>>>>>> REPLACE', chat, re.S | re.M)
for name, old, new in blocks:
    p = pathlib.Path(name)
    p.write_text(p.read_text().replace(old, new, 1))
EOF
#1778364383
python -m pytest -q 2>&1 | tail -3
#1778364406
git diff
