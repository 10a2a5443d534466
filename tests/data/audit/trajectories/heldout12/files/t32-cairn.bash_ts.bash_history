#1752607810
head -n 1 recordings/title-case.cast | jq .
#1752607833
cat cairn/titles.py
#1752607856
python -c "from cairn.titles import title_case as t; print(t('the lord of the rings')); print(t(\"don't look back\"))"
#1752607879
python - <<'EOF'
import pathlib
p = pathlib.Path('cairn/titles.py')
s = p.read_text().replace('    return text.title()',
    '    small = {"a", "an", "and", "at", "in", "of", "on", "the", "to"}\n'
    '    parts = text.lower().split()\n'
    '    return " ".join(\n'
    '        w if 0 < k < len(parts) - 1 and w in small else w[:1].upper() + w[1:]\n'
    '        for k, w in enumerate(parts)\n'
    '    )')
p.write_text(s)
EOF
#1752607902
python -c "from cairn.titles import title_case as t; print(t('the lord of the rings')); print(t(\"don't look back\"))"
#1752607925
python -m pytest -q 2>&1 | tail -3
#1752607948
git diff
