#1755443933
grep -rn --exclude-dir=.metadata --exclude-dir=.git to_celsius .
#1755443956
cat bothy/temps.py
#1755443979
python -c 'from bothy.temps import to_celsius as c; print(c("20C"), c("68F"), c("293.15K"))'
#1755444002
python - <<'EOF'
import pathlib
p = pathlib.Path('bothy/temps.py')
p.write_text(p.read_text().replace('    return float(reading[:-1])', '    text = reading.strip()\n    number, scale = float(text[:-1]), text[-1:].lower()\n    if scale == "c":\n        return round(number, 1)\n    if scale == "f":\n        return round((number - 32) / 1.8, 1)\n    if scale == "k":\n        return round(number - 273.15, 1)\n    raise ValueError("unit must be C, F or K")'))
EOF
#1755444025
python -c 'from bothy.temps import to_celsius as c; print(c("20C"), c("68F"), c("293.15K"))'
#1755444048
python -m pytest -q 2>&1 | tail -3
#1755444071
git diff
