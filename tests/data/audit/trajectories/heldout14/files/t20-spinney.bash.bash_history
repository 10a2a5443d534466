rm -f spinney/phone.py.save spinney/.phone.py.swp
cat spinney/phone.py
python -c 'from spinney.phone import format_phone as f; print(f("5551234567"), f("555.123.4567"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('spinney/phone.py')
p.write_text(p.read_text().replace('    return f"({number[:3]}) {number[3:6]}-{number[6:]}"', '    nums = "".join(filter(str.isdigit, number))\n    if len(nums) == 11 and nums[0] == "1":\n        nums = nums[1:]\n    if len(nums) != 10:\n        raise ValueError("expected ten digits")\n    return f"({nums[:3]}) {nums[3:6]}-{nums[6:]}"'))
EOF
python -c 'from spinney.phone import format_phone as f; print(f("5551234567"), f("555.123.4567"))'
python -m pytest -q 2>&1 | tail -3
git diff
