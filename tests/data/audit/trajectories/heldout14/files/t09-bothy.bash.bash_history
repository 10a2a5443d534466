find .metadata -path '*/.history/*' -type f -exec tail -n +3 {} +
python - <<'EOF'
import pathlib
p = pathlib.Path('bothy/temps.py')
p.write_text(p.read_text().replace('    return float(reading[:-1])', '    text = reading.strip()\n    number, scale = float(text[:-1]), text[-1:].lower()\n    if scale == "c":\n        return round(number, 1)\n    if scale == "f":\n        return round((number - 32) / 1.8, 1)\n    if scale == "k":\n        return round(number - 273.15, 1)\n    raise ValueError("unit must be C, F or K")'))
EOF
python -m pytest -q 2>&1 | tail -3
