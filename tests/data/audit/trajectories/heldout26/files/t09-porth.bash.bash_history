python -c "import zipfile; print(zipfile.ZipFile('porth.pyz').read('porth/berth.py').decode())"
python - <<'EOF'
import pathlib
p = pathlib.Path('porth/berth.py')
t = p.read_text()
t = t.replace('    return length * nights * 2.40', '    if not length > 0 or nights <= 0:\n        raise ValueError("bad berth")\n    return round(2.4 * nights * max(6, length), 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
