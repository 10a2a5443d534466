sed -e 's/<[^>]*>//g' site/reference/index.html | python -c 'import html, sys; print(html.unescape(sys.stdin.read()))'
python - <<'EOF'
import pathlib
p = pathlib.Path('bolter/sieve.py')
t = p.read_text()
t = t.replace('    return int(flour_kg // 12)', '    if not flour_kg > 0:\n        raise ValueError("no flour")\n    return 2 * -int(-flour_kg // 12)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
