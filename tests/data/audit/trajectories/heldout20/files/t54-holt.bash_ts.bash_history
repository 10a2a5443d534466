#1768491359
rm -f profile-*.json
#1768491382
cat holt/fines.py
#1768491405
python -c 'from holt.fines import late_fee as f; print([f(d) for d in (2, 5, 40)])'
#1768491428
python - <<'EOF'
import pathlib
p = pathlib.Path('holt/fines.py')
t = p.read_text()
t = t.replace('    return days * 0.25', '    if days < 0:\n        raise ValueError("negative days")\n    owed = 0.25 * max(0, days - 3)\n    return owed if owed < 5.0 else 5.0')
p.write_text(t)
EOF
#1768491451
python -c 'from holt.fines import late_fee as f; print([f(d) for d in (2, 5, 40)])'
#1768491474
python -m pytest -q 2>&1 | tail -3
#1768491497
git diff
