#1782029922
ls -a && git status --ignored --short
#1782029945
cat balla/hay.py
#1782029968
python -c 'from balla.hay import bales; print(bales(10), bales(3), bales(0.5))'
#1782029991
python - <<'EOF'
import pathlib
p = pathlib.Path('balla/hay.py')
t = p.read_text()
t = t.replace('    return int(acres * 22)', '    if not acres > 0:\n        raise ValueError("no acres")\n    return -int(-(acres * 22 * 21) // 20)')
p.write_text(t)
EOF
#1782030014
python -c 'from balla.hay import bales; print(bales(10), bales(3), bales(0.5))'
#1782030037
python -m pytest -q 2>&1 | tail -3
#1782030060
git diff
