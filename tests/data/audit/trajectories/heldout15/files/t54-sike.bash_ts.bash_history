#1758929648
git check-ignore -v dist; ls dist
#1758929671
cat sike/bearing.py
#1758929694
python -c 'from sike.bearing import compass as c; print(c(350), c(23), c(-45), c(360))'
#1758929717
python - <<'EOF'
import pathlib
p = pathlib.Path('sike/bearing.py')
p.write_text(p.read_text().replace('    return _POINTS[int(degrees / 45)]', '    if degrees != degrees or degrees in (float("inf"), float("-inf")):\n        raise ValueError("bearing must be finite")\n    sector = int((degrees % 360 + 22.5) // 45) % 8\n    return _POINTS[sector]'))
EOF
#1758929740
python -c 'from sike.bearing import compass as c; print(c(350), c(23), c(-45), c(360))'
#1758929763
python -m pytest -q 2>&1 | tail -3
#1758929786
git diff
