#1790854404
rm -rf .hypothesis && git status --short
#1790854427
cat tusker/cart.py
#1790854450
python -c 'from tusker.cart import loads; print(loads(41), loads(40), loads(1))'
#1790854473
python - <<'EOF'
import pathlib
p = pathlib.Path('tusker/cart.py')
t = p.read_text()
t = t.replace('    return peats // 40', '    if not peats > 0:\n        raise ValueError("no peats")\n    return -(-peats // 40)')
p.write_text(t)
EOF
#1790854496
python -c 'from tusker.cart import loads; print(loads(41), loads(40), loads(1))'
#1790854519
python -m pytest -q 2>&1 | tail -3
#1790854542
git diff
