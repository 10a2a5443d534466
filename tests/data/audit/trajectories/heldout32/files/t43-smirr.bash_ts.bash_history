#1790008299
sed -n '/^+/p' wandb/offline-run-*/files/upstream_diff_*.patch
#1790008322
python - <<'EOF'
import pathlib
p = pathlib.Path('smirr/rain.py')
t = p.read_text()
t = t.replace('    return int(rain_mm * 20 // 200)', '    if not rain_mm > 0:\n        raise ValueError("no rain")\n    return -int(-(rain_mm * 20) // 200)')
p.write_text(t)
EOF
#1790008345
python -m pytest -q 2>&1 | tail -3
