ls -t ~/.vscode-server/data/User/History/-5a3c9e1f
cat esker/colors.py
python -c 'from esker.colors import hex_to_rgb as h; print(h("#ff8800")); print(h("#f80"))' 2>&1 | tail -1
python - <<'EOF'
import pathlib
p = pathlib.Path('esker/colors.py')
old = '    code = code.lstrip("#")\n'
new = '    code = code.lstrip("#")\n    if len(code) == 3:\n        code = "".join(c + c for c in code)\n    if len(code) != 6:\n        raise ValueError("bad colour code: " + repr(code))\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
python -c 'from esker.colors import hex_to_rgb as h; print(h("#ff8800")); print(h("#f80"))' 2>&1 | tail -1
python -m pytest -q 2>&1 | tail -3
git diff
