for f in .joblib/joblib/fjord/numerals/roman/*/output.pkl; do python -m pickle "$f"; done
cat fjord/numerals.py
python -c 'from fjord.numerals import roman; print(roman(4), roman(14), roman(1994))'
python - <<'EOF'
import pathlib
p = pathlib.Path('fjord/numerals.py')
s = p.read_text()
s = s.replace('(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")',
    '\n    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),\n'
    '    (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"),\n'
    '    (5, "V"), (4, "IV"), (1, "I"),\n')
s = s.replace('    out = ""\n', '    if n < 1 or n > 3999:\n'
    '        raise ValueError("roman numerals cover 1 to 3999")\n    out = ""\n')
p.write_text(s)
EOF
python -c 'from fjord.numerals import roman; print(roman(4), roman(14), roman(1994))'
python -m pytest -q 2>&1 | tail -3
git diff
