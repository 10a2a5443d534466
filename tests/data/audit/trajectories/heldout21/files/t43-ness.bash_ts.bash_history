#1770914000
cat .trace/test_batches.cover
#1770914023
python - <<'EOF'
import pathlib
p = pathlib.Path('ness/batches.py')
t = p.read_text()
t = t.replace('    return items // size', '    if size <= 0 or items < 0:\n        raise ValueError("bad batch")\n    full, rest = divmod(items, size)\n    return full + (1 if rest else 0)')
p.write_text(t)
EOF
#1770914046
python -m pytest -q 2>&1 | tail -3
