#1765774156
rm -rf debian
#1765774179
cat shaw/odds.py
#1765774202
python -c 'from shaw.odds import implied_probability as p; print(p("5/2"), p(" 1/1 "))'
#1765774225
python - <<'EOF'
import pathlib
p = pathlib.Path('shaw/odds.py')
t = p.read_text()
t = t.replace('    against, stake = odds.split("/")\n    return int(stake) / int(against)', '    parts = odds.strip().split("/")\n    if len(parts) != 2 or not all(p.isdigit() for p in parts):\n        raise ValueError("bad odds")\n    a, b = int(parts[0]), int(parts[1])\n    if a + b == 0:\n        raise ValueError("bad odds")\n    return round(b / (a + b), 3)')
p.write_text(t)
EOF
#1765774248
python -c 'from shaw.odds import implied_probability as p; print(p("5/2"), p(" 1/1 "))'
#1765774271
python -m pytest -q 2>&1 | tail -3
#1765774294
git diff
