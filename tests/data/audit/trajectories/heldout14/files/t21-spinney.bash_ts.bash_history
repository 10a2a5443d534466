#1755814436
diff spinney/phone.py spinney/phone.py.save
#1755814459
python - <<'EOF'
import pathlib
p = pathlib.Path('spinney/phone.py')
p.write_text(p.read_text().replace('    return f"({number[:3]}) {number[3:6]}-{number[6:]}"', '    nums = "".join(filter(str.isdigit, number))\n    if len(nums) == 11 and nums[0] == "1":\n        nums = nums[1:]\n    if len(nums) != 10:\n        raise ValueError("expected ten digits")\n    return f"({nums[:3]}) {nums[3:6]}-{nums[6:]}"'))
EOF
#1755814482
python -m pytest -q 2>&1 | tail -3
