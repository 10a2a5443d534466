sed 's/<[^>]*>//g' docs/_build/html/_modules/drumlin/words.html | grep -A12 'def pluralize'
python - <<'EOF'
import pathlib
p = pathlib.Path('drumlin/words.py')
old = '    return word if count == 1 else word + "s"\n'
new = '    if count == 1:\n        return word\n    if word.endswith(("s", "x", "z", "ch", "sh")):\n        return word + "es"\n    if word.endswith("y") and word[-2:-1] not in "aeiou":\n        return word[:-1] + "ies"\n    return word + "s"\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
python -m pytest -q 2>&1 | tail -3
