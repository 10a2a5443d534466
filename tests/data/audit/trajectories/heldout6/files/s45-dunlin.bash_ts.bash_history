#1741605115
git -C vendor/isodur describe --tags
#1741605138
git submodule update --init
#1741605161
python - <<'EOF'
import pathlib
p = pathlib.Path('vendor/isodur/isodur.py')
s = p.read_text()
s = s.replace('r"^P(?:(?P<days>', 'r"^P(?:(?P<weeks>\\d+)W)?(?:(?P<days>')
p.write_text(s)
EOF
#1741605184
python -m pytest -q
