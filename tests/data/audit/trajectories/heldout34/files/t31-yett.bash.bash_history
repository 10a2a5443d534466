cat yett/_version.py
git show cafd797
python - <<'EOF'
import pathlib
p = pathlib.Path('yett/gate.py')
t = p.read_text()
t = t.replace('    return bars * 3', '    if not bars >= 1:\n        raise ValueError("no bars")\n    return 3 * bars + 4')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
