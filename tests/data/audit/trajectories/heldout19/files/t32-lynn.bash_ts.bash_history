#1767681554
cat .snapshots/41/info.xml
#1767681577
cat lynn/wind.py
#1767681600
python -c 'from lynn.wind import beaufort; print([beaufort(k) for k in (10, 30, 70)])'
#1767681623
python - <<'EOF'
import pathlib
p = pathlib.Path('lynn/wind.py')
t = p.read_text()
t = t.replace('    return int(knots / 5)', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    bounds = [1, 4, 7, 11, 17, 22, 28, 34, 41, 48, 56, 64]\n    force = 0\n    while force < 12 and knots >= bounds[force]:\n        force += 1\n    return force')
p.write_text(t)
EOF
#1767681646
python -c 'from lynn.wind import beaufort; print([beaufort(k) for k in (10, 30, 70)])'
#1767681669
python -m pytest -q 2>&1 | tail -3
#1767681692
git diff
