#1778663266
cat .git/info/exclude; git check-ignore -v result.json
#1778663289
cat ffos/ditch.py
#1778663312
python -c 'from ffos.ditch import flow; print(flow(1.0, 0.5, 0.2), flow(0.6, 0.3, 0.45))'
#1778663335
python - <<'EOF'
import pathlib
p = pathlib.Path('ffos/ditch.py')
t = p.read_text()
t = t.replace('    return width * depth * speed', '    if width < 0 or depth < 0 or speed < 0:\n        raise ValueError("negative ditch")\n    return round(800 * width * depth * speed)')
p.write_text(t)
EOF
#1778663358
python -c 'from ffos.ditch import flow; print(flow(1.0, 0.5, 0.2), flow(0.6, 0.3, 0.45))'
#1778663381
python -m pytest -q 2>&1 | tail -3
#1778663404
git diff
