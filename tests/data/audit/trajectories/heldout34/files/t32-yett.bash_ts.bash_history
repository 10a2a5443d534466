#1792484047
git status --ignored --short && ls -A
#1792484070
cat yett/gate.py
#1792484093
python -c 'from yett.gate import rivets; print(rivets(5), rivets(1))'
#1792484116
python - <<'EOF'
import pathlib
p = pathlib.Path('yett/gate.py')
t = p.read_text()
t = t.replace('    return bars * 3', '    if not bars >= 1:\n        raise ValueError("no bars")\n    return 3 * bars + 4')
p.write_text(t)
EOF
#1792484139
python -c 'from yett.gate import rivets; print(rivets(5), rivets(1))'
#1792484162
python -m pytest -q 2>&1 | tail -3
#1792484185
git diff
