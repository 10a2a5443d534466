#1793824289
git status --ignored --short && ls -A
#1793824312
cat cruive/catch.py
#1793824335
python -c 'from cruive.catch import boxes; print(boxes(17), boxes(16), boxes(1))'
#1793824358
python - <<'EOF'
import pathlib
p = pathlib.Path('cruive/catch.py')
t = p.read_text()
t = t.replace('    return salmon // 8', '    if not salmon > 0:\n        raise ValueError("no salmon")\n    return -(-salmon // 8)')
p.write_text(t)
EOF
#1793824381
python -c 'from cruive.catch import boxes; print(boxes(17), boxes(16), boxes(1))'
#1793824404
python -m pytest -q 2>&1 | tail -3
#1793824427
git diff
