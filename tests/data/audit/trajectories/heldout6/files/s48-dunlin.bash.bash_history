M=vendor/isodur
git -C $M log -1 --format=%s
python - <<'EOF'
import pathlib
p = pathlib.Path('vendor/isodur/isodur.py')
s = p.read_text()
s = s.replace('r"^P(?:(?P<days>', 'r"^P(?:(?P<weeks>\\d+)W)?(?:(?P<days>')
p.write_text(s)
EOF
git -C $M diff
python -m pytest -q
