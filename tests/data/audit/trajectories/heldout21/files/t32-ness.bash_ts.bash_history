#1771548218
ls -a && git status --ignored --short
#1771548241
cat ness/batches.py
#1771548264
python -c 'from ness.batches import batches; print([batches(n, 12) for n in (0, 1, 12, 13, 25)])'
#1771548287
python - <<'EOF'
import pathlib
p = pathlib.Path('ness/batches.py')
t = p.read_text()
t = t.replace('    return items // size', '    if size <= 0 or items < 0:\n        raise ValueError("bad batch")\n    full, rest = divmod(items, size)\n    return full + (1 if rest else 0)')
p.write_text(t)
EOF
#1771548310
python -c 'from ness.batches import batches; print([batches(n, 12) for n in (0, 1, 12, 13, 25)])'
#1771548333
python -m pytest -q 2>&1 | tail -3
#1771548356
git diff
