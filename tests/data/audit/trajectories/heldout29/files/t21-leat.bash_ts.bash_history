#1785839123
grep -rn SPEED_MS .hg
#1785839146
python - <<'EOF'
import pathlib
p = pathlib.Path('leat/lade.py')
t = p.read_text()
t = t.replace('    return width_m * depth_m * 1000', '    if not (width_m >= 0 and depth_m >= 0):\n        raise ValueError("negative size")\n    return round(680 * width_m * depth_m, 1)')
p.write_text(t)
EOF
#1785839169
python -m pytest -q 2>&1 | tail -3
