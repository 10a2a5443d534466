cat CHANGELOG.md
cat sneck/latch.py
python -c 'from sneck.latch import screws; print(screws(3), screws(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('sneck/latch.py')
t = p.read_text()
t = t.replace('    return latches * 4', '    if not latches >= 1:\n        raise ValueError("no latches")\n    return 6 * latches')
p.write_text(t)
EOF
python -c 'from sneck.latch import screws; print(screws(3), screws(1))'
python -m pytest -q 2>&1 | tail -3
git diff
