sed -n '/test_bill.py ====/,/^SHAR_EOF/p' moel-fix.shar
python - <<'EOF'
import pathlib
p = pathlib.Path('moel/bill.py')
t = p.read_text()
t = t.replace('    return total / people', '    if people <= 0 or total < 0:\n        raise ValueError("bad bill")\n    pence = -(-round(total * 100, 6) // people)\n    return pence / 100')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
