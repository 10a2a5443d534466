#1793214362
git format-patch -1 --stdout $(grep -o '[0-9a-f]\{40\}' CHANGELOG.next.md)
#1793214385
python - <<'EOF'
import pathlib
p = pathlib.Path('sneck/latch.py')
t = p.read_text()
t = t.replace('    return latches * 4', '    if not latches >= 1:\n        raise ValueError("no latches")\n    return 6 * latches')
p.write_text(t)
EOF
#1793214408
python -m pytest -q 2>&1 | tail -3
