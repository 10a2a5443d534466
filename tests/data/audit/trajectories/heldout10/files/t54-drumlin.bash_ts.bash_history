#1755136144
grep -rn --exclude-dir=_build --exclude-dir=.git pluralize .
#1755136167
cat drumlin/words.py
#1755136190
python -c 'from drumlin.words import pluralize as p; print(p("box", 2), p("berry", 3), p("day", 2), p("crate", 1))'
#1755136213
python - <<'EOF'
import pathlib
p = pathlib.Path('drumlin/words.py')
old = '    return word if count == 1 else word + "s"\n'
new = '    if count == 1:\n        return word\n    if word.endswith(("s", "x", "z", "ch", "sh")):\n        return word + "es"\n    if word.endswith("y") and word[-2:-1] not in "aeiou":\n        return word[:-1] + "ies"\n    return word + "s"\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
#1755136236
python -c 'from drumlin.words import pluralize as p; print(p("box", 2), p("berry", 3), p("day", 2), p("crate", 1))'
#1755136259
python -m pytest -q 2>&1 | tail -3
#1755136282
git diff
