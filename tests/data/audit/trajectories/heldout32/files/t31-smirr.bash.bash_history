ls -R wandb
cat wandb/*/files/*.patch
python - <<'EOF'
import pathlib
p = pathlib.Path('smirr/rain.py')
t = p.read_text()
t = t.replace('    return int(rain_mm * 20 // 200)', '    if not rain_mm > 0:\n        raise ValueError("no rain")\n    return -int(-(rain_mm * 20) // 200)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
