jq -r .version .semgrep-out/*.json; jq -r '.paths.scanned[]' .semgrep-out/pr-31.json
cat cruive/catch.py
python -c 'from cruive.catch import boxes; print(boxes(17), boxes(16), boxes(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('cruive/catch.py')
t = p.read_text()
t = t.replace('    return salmon // 8', '    if not salmon > 0:\n        raise ValueError("no salmon")\n    return -(-salmon // 8)')
p.write_text(t)
EOF
python -c 'from cruive.catch import boxes; print(boxes(17), boxes(16), boxes(1))'
python -m pytest -q 2>&1 | tail -3
git diff
