ls -A .scratch && cat .scratch/pr-57-files.html
python - <<'EOF'
import pathlib
p = pathlib.Path('sorrel/avatar.py')
s = p.read_text().replace(
    '    return "".join(word[0] for word in name.split(" ")).upper()',
    '    words = name.replace("-", " ").split()\n'
    '    return "".join(w[0] for w in words).upper() or "?"')
p.write_text(s)
EOF
python -m pytest -q 2>&1 | tail -3
