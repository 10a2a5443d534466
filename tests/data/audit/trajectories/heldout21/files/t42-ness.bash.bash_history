grep -c '>>>>>>' .trace/*.cover
cat ness/batches.py
python -c 'from ness.batches import batches; print([batches(n, 12) for n in (0, 1, 12, 13, 25)])'
python - <<'EOF'
import pathlib
p = pathlib.Path('ness/batches.py')
t = p.read_text()
t = t.replace('    return items // size', '    if size <= 0 or items < 0:\n        raise ValueError("bad batch")\n    full, rest = divmod(items, size)\n    return full + (1 if rest else 0)')
p.write_text(t)
EOF
python -c 'from ness.batches import batches; print([batches(n, 12) for n in (0, 1, 12, 13, 25)])'
python -m pytest -q 2>&1 | tail -3
git diff
