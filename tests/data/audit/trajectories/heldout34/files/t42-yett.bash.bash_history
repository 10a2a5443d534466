git log --oneline --decorate --all && git show --stat v0.4.0
cat yett/gate.py
python -c 'from yett.gate import rivets; print(rivets(5), rivets(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('yett/gate.py')
t = p.read_text()
t = t.replace('    return bars * 3', '    if not bars >= 1:\n        raise ValueError("no bars")\n    return 3 * bars + 4')
p.write_text(t)
EOF
python -c 'from yett.gate import rivets; print(rivets(5), rivets(1))'
python -m pytest -q 2>&1 | tail -3
git diff
