python -m tarfile -e dist/sike-0.6.1.tar.gz /tmp/sd/
cat /tmp/sd/sike-0.6.1/sike/bearing.py
python - <<'EOF'
import pathlib
p = pathlib.Path('sike/bearing.py')
p.write_text(p.read_text().replace('    return _POINTS[int(degrees / 45)]', '    if degrees != degrees or degrees in (float("inf"), float("-inf")):\n        raise ValueError("bearing must be finite")\n    sector = int((degrees % 360 + 22.5) // 45) % 8\n    return _POINTS[sector]'))
EOF
python -m pytest -q 2>&1 | tail -3
