tail -n 20 .cache/pre-commit/patch1733990400-4242
python - <<'EOF'
import pathlib
p = pathlib.Path('wyke/cards.py')
s = p.read_text().replace(
    '    return "*" * 12 + number[-4:]',
    '    kept = "".join(ch for ch in number if ch.isdigit())\n'
    '    if len(kept) < 4:\n'
    '        raise ValueError("too few digits")\n'
    '    return kept[-4:].rjust(len(kept), "*")')
p.write_text(s)
EOF
python -m pytest -q 2>&1 | tail -3
