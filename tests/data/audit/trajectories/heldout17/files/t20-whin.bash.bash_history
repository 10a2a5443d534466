ls -a && git status --ignored --short
cat whin/words.py
python -c 'from whin.words import word_count as w; print(w("Hello, hello world!"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('whin/words.py')
t = p.read_text()
t = t.replace('    for word in text.split():\n', '    for raw in text.lower().split():\n        word = raw.strip(".,;:!?\\"()")\n        if not word:\n            continue\n')
p.write_text(t)
EOF
python -c 'from whin.words import word_count as w; print(w("Hello, hello world!"))'
python -m pytest -q 2>&1 | tail -3
git diff
