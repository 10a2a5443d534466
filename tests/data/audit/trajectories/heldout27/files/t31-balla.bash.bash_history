ls -a .scannerwork .scannerwork/scanner-report
cat .scannerwork/scanner-report/source-3.txt
python - <<'EOF'
import pathlib
p = pathlib.Path('balla/hay.py')
t = p.read_text()
t = t.replace('    return int(acres * 22)', '    if not acres > 0:\n        raise ValueError("no acres")\n    return -int(-(acres * 22 * 21) // 20)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
