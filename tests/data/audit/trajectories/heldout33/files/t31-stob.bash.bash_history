ls pip-reports && cat pip-reports/pr-12.json
git show eb31a92
python - <<'EOF'
import pathlib
p = pathlib.Path('stob/fence.py')
t = p.read_text()
t = t.replace('    return int(metres // 2)', '    if not metres > 0:\n        raise ValueError("no length")\n    return 1 - int(-metres // 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
