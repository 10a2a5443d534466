cat lost+found/*
python - <<'EOF'
import pathlib
p = pathlib.Path('howe/units.py')
t = p.read_text()
t = t.replace('_FACTORS = {"m": 1.0, "cm": 0.01}', '_FACTORS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048}')
t = t.replace('    number, unit = text.split()\n    return float(number) * _FACTORS[unit]', '    s = text.strip().lower()\n    cut = len(s.rstrip("abcdefghijklmnopqrstuvwxyz"))\n    number, unit = s[:cut].strip(), s[cut:]\n    if unit not in _FACTORS:\n        raise ValueError("unknown unit")\n    return round(float(number) * _FACTORS[unit], 6)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
