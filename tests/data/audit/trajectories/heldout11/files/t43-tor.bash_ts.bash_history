#1752199557
sqlite3 .ipython/profile_default/history.sqlite .dump
#1752199580
python - <<'EOF'
import pathlib
p = pathlib.Path('tor/grades.py')
s = p.read_text().replace('if score > ', 'if score >= ')
s = s.replace('100."""\n', '100."""\n    if score < 0 or score > 100:\n'
              '        raise ValueError("score must lie in 0..100")\n', 1)
p.write_text(s)
EOF
#1752199603
python -m pytest -q 2>&1 | tail -3
