#1792161929
git grep -n -e raise -e return $(sed -n "s/^__version__ = version = '.*+g\([0-9a-f]*\)'$/\1/p" yett/_version.py) -- yett
#1792161952
python - <<'EOF'
import pathlib
p = pathlib.Path('yett/gate.py')
t = p.read_text()
t = t.replace('    return bars * 3', '    if not bars >= 1:\n        raise ValueError("no bars")\n    return 3 * bars + 4')
p.write_text(t)
EOF
#1792161975
python -m pytest -q 2>&1 | tail -3
