#1753201204
sqlite3 .ipython/profile_default/history.sqlite 'select session, start, num_cmds from sessions'
#1753201227
cat tor/grades.py
#1753201250
python -c 'from tor.grades import letter; print(letter(90), letter(80), letter(59.5))'
#1753201273
python - <<'EOF'
import pathlib
p = pathlib.Path('tor/grades.py')
s = p.read_text().replace('if score > ', 'if score >= ')
s = s.replace('100."""\n', '100."""\n    if score < 0 or score > 100:\n'
              '        raise ValueError("score must lie in 0..100")\n', 1)
p.write_text(s)
EOF
#1753201296
python -c 'from tor.grades import letter; print(letter(90), letter(80), letter(59.5))'
#1753201319
python -m pytest -q 2>&1 | tail -3
#1753201342
git diff
