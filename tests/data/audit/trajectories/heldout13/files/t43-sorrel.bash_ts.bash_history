#1752781578
node -e "const s = require('fs').readFileSync('.scratch/pr-57-files.html', 'utf8'); for (const m of s.matchAll(/addition\">([^<]*)/g)) console.log(m[1]);"
#1752781601
python - <<'EOF'
import pathlib
p = pathlib.Path('sorrel/avatar.py')
s = p.read_text().replace(
    '    return "".join(word[0] for word in name.split(" ")).upper()',
    '    words = name.replace("-", " ").split()\n'
    '    return "".join(w[0] for w in words).upper() or "?"')
p.write_text(s)
EOF
#1752781624
python -m pytest -q 2>&1 | tail -3
