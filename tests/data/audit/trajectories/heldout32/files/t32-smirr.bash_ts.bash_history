#1789433138
git status --ignored --short && ls -a
#1789433161
cat smirr/rain.py
#1789433184
python -c 'from smirr.rain import butts; print(butts(15), butts(10), butts(1))'
#1789433207
python - <<'EOF'
import pathlib
p = pathlib.Path('smirr/rain.py')
t = p.read_text()
t = t.replace('    return int(rain_mm * 20 // 200)', '    if not rain_mm > 0:\n        raise ValueError("no rain")\n    return -int(-(rain_mm * 20) // 200)')
p.write_text(t)
EOF
#1789433230
python -c 'from smirr.rain import butts; print(butts(15), butts(10), butts(1))'
#1789433253
python -m pytest -q 2>&1 | tail -3
#1789433276
git diff
