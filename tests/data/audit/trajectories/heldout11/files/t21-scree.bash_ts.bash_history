#1752179536
rm -rf .ci
#1752179559
cat scree/money.py
#1752179582
python -c 'from scree.money import render_amount as f; print(f(1250), f(123456789), f(-5))'
#1752179605
python - <<'EOF'
import pathlib
p = pathlib.Path('scree/money.py')
p.write_text(p.read_text().replace(
    '    return "$" + str(cents / 100)',
    '    neg = cents < 0\n'
    '    dollars, rest = divmod(-cents if neg else cents, 100)\n'
    '    return ("-" if neg else "") + "${:,}.{:02d}".format(dollars, rest)',
))
EOF
#1752179628
python -c 'from scree.money import render_amount as f; print(f(1250), f(123456789), f(-5))'
#1752179651
python -m pytest -q 2>&1 | tail -3
#1752179674
git diff
