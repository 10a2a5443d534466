rm -f nohup.out
cat heugh/fares.py
python -c 'from heugh.fares import fare; print([fare(a) for a in (3, 10, 16, 64, 65)])'
python - <<'EOF'
import pathlib
p = pathlib.Path('heugh/fares.py')
t = p.read_text()
t = t.replace('    return 8.0', '    if age < 0:\n        raise ValueError("negative age")\n    if age <= 4:\n        return 0.0\n    if 5 <= age <= 15 or 65 <= age:\n        return 4.0\n    return 8.0')
p.write_text(t)
EOF
python -c 'from heugh.fares import fare; print([fare(a) for a in (3, 10, 16, 64, 65)])'
python -m pytest -q 2>&1 | tail -3
git diff
