git log --oneline
cat sorrel/avatar.py
python -c 'from sorrel.avatar import initials as i; print(i("ada lovelace"), i("Jean-Luc Picard"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('sorrel/avatar.py')
s = p.read_text().replace(
    '    return "".join(word[0] for word in name.split(" ")).upper()',
    '    words = name.replace("-", " ").split()\n'
    '    return "".join(w[0] for w in words).upper() or "?"')
p.write_text(s)
EOF
python -c 'from sorrel.avatar import initials as i; print(i("ada lovelace"), i("Jean-Luc Picard"))'
python -m pytest -q 2>&1 | tail -3
git diff
