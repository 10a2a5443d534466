#1754252222
ls recordings
#1754252245
cat recordings/title-case.cast
#1754252268
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
#1754252291
python -m pytest -q 2>&1 | tail -3
