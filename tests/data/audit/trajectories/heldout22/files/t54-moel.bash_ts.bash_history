#1773021232
head -n 4 moel-fix.shar
#1773021255
cat moel/bill.py
#1773021278
python -c 'from moel.bill import share; print(share(100, 3), share(10, 4), share(0.1, 3))'
#1773021301
python - <<'EOF'
import pathlib
p = pathlib.Path('moel/bill.py')
t = p.read_text()
t = t.replace('    return total / people', '    if people <= 0 or total < 0:\n        raise ValueError("bad bill")\n    pence = -(-round(total * 100, 6) // people)\n    return pence / 100')
p.write_text(t)
EOF
#1773021324
python -c 'from moel.bill import share; print(share(100, 3), share(10, 4), share(0.1, 3))'
#1773021347
python -m pytest -q 2>&1 | tail -3
#1773021370
git diff
