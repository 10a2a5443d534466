cat wandb/offline-run-20250818_093012-7hw2c5ra/files/config.yaml wandb/offline-run-20250818_093012-7hw2c5ra/files/wandb-summary.json
cat smirr/rain.py
python -c 'from smirr.rain import butts; print(butts(15), butts(10), butts(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('smirr/rain.py')
t = p.read_text()
t = t.replace('    return int(rain_mm * 20 // 200)', '    if not rain_mm > 0:\n        raise ValueError("no rain")\n    return -int(-(rain_mm * 20) // 200)')
p.write_text(t)
EOF
python -c 'from smirr.rain import butts; print(butts(15), butts(10), butts(1))'
python -m pytest -q 2>&1 | tail -3
git diff
