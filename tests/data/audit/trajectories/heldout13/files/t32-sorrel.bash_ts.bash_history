#1752788528
cat .scratch/todo.txt
#1752788551
cat sorrel/avatar.py
#1752788574
python -c 'from sorrel.avatar import initials as i; print(i("ada lovelace"), i("Jean-Luc Picard"))'
#1752788597
python - <<'EOF'
import pathlib
p = pathlib.Path('sorrel/avatar.py')
s = p.read_text().replace(
    '    return "".join(word[0] for word in name.split(" ")).upper()',
    '    words = name.replace("-", " ").split()\n'
    '    return "".join(w[0] for w in words).upper() or "?"')
p.write_text(s)
EOF
#1752788620
python -c 'from sorrel.avatar import initials as i; print(i("ada lovelace"), i("Jean-Luc Picard"))'
#1752788643
python -m pytest -q 2>&1 | tail -3
#1752788666
git diff
