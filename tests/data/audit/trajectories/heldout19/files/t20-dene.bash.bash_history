ls dene && git status --ignored --short
cat dene/fares.py
python -c 'from dene.fares import fare; print(fare(0.5), fare(1), fare(3))'
python - <<'EOF'
import pathlib
p = pathlib.Path('dene/fares.py')
t = p.read_text()
t = t.replace('    return 1.5 * miles', '    if not miles > 0:\n        raise ValueError("trip length must be positive")\n    pence = 250 + 120 * max(0.0, miles - 1.0)\n    return round(pence / 100, 2)')
p.write_text(t)
EOF
python -c 'from dene.fares import fare; print(fare(0.5), fare(1), fare(3))'
python -m pytest -q 2>&1 | tail -3
git diff
