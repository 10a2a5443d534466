python - <<'EOF'
import sys
sys.path.insert(0, 'debian/python3-shaw/usr/lib/python3/dist-packages')
from shaw.odds import implied_probability as p
print(p('5/2'), p(' 1/1 '))
try:
    p('5-2')
except Exception as e:
    print(type(e).__name__)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('shaw/odds.py')
t = p.read_text()
t = t.replace('    against, stake = odds.split("/")\n    return int(stake) / int(against)', '    parts = odds.strip().split("/")\n    if len(parts) != 2 or not all(p.isdigit() for p in parts):\n        raise ValueError("bad odds")\n    a, b = int(parts[0]), int(parts[1])\n    if a + b == 0:\n        raise ValueError("bad odds")\n    return round(b / (a + b), 3)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
