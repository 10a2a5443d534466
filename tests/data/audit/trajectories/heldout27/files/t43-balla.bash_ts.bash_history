#1781535126
grep -n assert .scannerwork/scanner-report/source-4.txt
#1781535149
python - <<'EOF'
import pathlib
p = pathlib.Path('balla/hay.py')
t = p.read_text()
t = t.replace('    return int(acres * 22)', '    if not acres > 0:\n        raise ValueError("no acres")\n    return -int(-(acres * 22 * 21) // 20)')
p.write_text(t)
EOF
#1781535172
python -m pytest -q 2>&1 | tail -3
