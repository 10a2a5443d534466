sed -n '/^from garn.fence/,/^-- $/p' dead.letter
python - <<'EOF'
import pathlib
p = pathlib.Path('garn/fence.py')
t = p.read_text()
t = t.replace('    return int(length / gap)', '    if length < 0 or not gap > 0:\n        raise ValueError("bad fence")\n    spans = -(-round(length / gap, 6) // 1)\n    return int(spans) + 1')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
