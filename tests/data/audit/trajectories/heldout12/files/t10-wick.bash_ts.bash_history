#1752563122
rm -rf .debug && git status --short
#1752563145
cat wick/labels.py
#1752563168
python -c 'from wick.labels import truncate as t; print(ascii(t("status", 10)), ascii(t("synchronising", 6)), len(t("synchronising", 6)))'
#1752563191
python - <<'EOF'
import pathlib
p = pathlib.Path('wick/labels.py')
s = p.read_text().replace('    return text[:width] + "..."',
    '    if width <= 0:\n'
    '        raise ValueError("width must be positive")\n'
    '    return text if len(text) <= width else text[: width - 1] + "\\u2026"')
p.write_text(s)
EOF
#1752563214
python -c 'from wick.labels import truncate as t; print(ascii(t("status", 10)), ascii(t("synchronising", 6)), len(t("synchronising", 6)))'
#1752563237
python -m pytest -q 2>&1 | tail -3
#1752563260
git diff
