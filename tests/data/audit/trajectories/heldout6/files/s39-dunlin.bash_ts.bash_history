#1743730823
git submodule status
#1743730846
git -C vendor/isodur diff HEAD origin/main -- isodur.py
#1743730869
python - <<'EOF'
import pathlib
p = pathlib.Path('vendor/isodur/isodur.py')
s = p.read_text()
s = s.replace('r"^P(?:(?P<days>', 'r"^P(?:(?P<weeks>\\d+)W)?(?:(?P<days>')
p.write_text(s)
EOF
#1743730892
python -m pytest -q
