#1763449731
ls -a && cat .uv-cache/.gitignore .uv-cache/CACHEDIR.TAG
#1763449754
cat scaur/pace.py
#1763449777
python -c 'from scaur.pace import pace; print(pace(4, 16.2), pace(3, 14))'
#1763449800
python - <<'EOF'
import pathlib
p = pathlib.Path('scaur/pace.py')
t = p.read_text()
t = t.replace('    per_km = minutes / km\n    return f"{int(per_km)}:{int(per_km % 1 * 60)}"', '    if not km > 0 or minutes < 0:\n        raise ValueError("bad distance or time")\n    secs = int(round(60 * minutes / km))\n    mins, secs = divmod(secs, 60)\n    return f"{mins}:{secs:02d}"')
p.write_text(t)
EOF
#1763449823
python -c 'from scaur.pace import pace; print(pace(4, 16.2), pace(3, 14))'
#1763449846
python -m pytest -q 2>&1 | tail -3
#1763449869
git diff
