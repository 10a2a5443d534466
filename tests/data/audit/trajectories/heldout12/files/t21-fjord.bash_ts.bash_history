#1754232159
python -c "import ast, glob
for p in glob.glob('.joblib/**/func_code.py', recursive=True):
    print(ast.unparse(ast.parse(open(p).read())))"
#1754232182
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
#1754232205
python -m pytest -q 2>&1 | tail -3
