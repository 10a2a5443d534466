head -1 .scannerwork/scanner-report/source-3.txt
cat balla/hay.py
python -c 'from balla.hay import bales; print(bales(10), bales(3), bales(0.5))'
python - <<'EOF'
import pathlib
p = pathlib.Path('balla/hay.py')
t = p.read_text()
t = t.replace('    return int(acres * 22)', '    if not acres > 0:\n        raise ValueError("no acres")\n    return -int(-(acres * 22 * 21) // 20)')
p.write_text(t)
EOF
python -c 'from balla.hay import bales; print(bales(10), bales(3), bales(0.5))'
python -m pytest -q 2>&1 | tail -3
git diff
