#1763005650
head -n 9 .uv-cache/archive-v0/Yb2kQ8nVx4sT0cLmW3dRe/scaur/pace.py
#1763005673
python - <<'EOF'
import pathlib
p = pathlib.Path('scaur/pace.py')
t = p.read_text()
t = t.replace('    per_km = minutes / km\n    return f"{int(per_km)}:{int(per_km % 1 * 60)}"', '    if not km > 0 or minutes < 0:\n        raise ValueError("bad distance or time")\n    secs = int(round(60 * minutes / km))\n    mins, secs = divmod(secs, 60)\n    return f"{mins}:{secs:02d}"')
p.write_text(t)
EOF
#1763005696
python -m pytest -q 2>&1 | tail -3
