grep -n -A16 FAILURES .ci/logs/job-4411.log
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
python -m pytest -q 2>&1 | tail -3
