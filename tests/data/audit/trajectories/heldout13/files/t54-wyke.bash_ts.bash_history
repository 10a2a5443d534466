#1754504521
rm -rf .cache/pre-commit
#1754504544
cat wyke/cards.py
#1754504567
python -c 'from wyke.cards import mask_card as m; print(m("4111 1111 1111 1234"), m("378282246310005"))'
#1754504590
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
#1754504613
python -c 'from wyke.cards import mask_card as m; print(m("4111 1111 1111 1234"), m("378282246310005"))'
#1754504636
python -m pytest -q 2>&1 | tail -3
#1754504659
git diff
