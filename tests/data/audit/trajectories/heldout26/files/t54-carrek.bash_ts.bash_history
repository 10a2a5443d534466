#1779919158
git check-ignore -v snoop.log; cat .gitignore
#1779919181
cat carrek/rope.py
#1779919204
python -c 'from carrek.rope import pitches; print(pitches(120), pitches(100), pitches(45, 50))'
#1779919227
python - <<'EOF'
import pathlib
p = pathlib.Path('carrek/rope.py')
t = p.read_text()
t = t.replace('    return int(height // rope)', '    if height <= 0 or rope <= 10:\n        raise ValueError("bad climb")\n    return -int(-height // (rope - 10))')
p.write_text(t)
EOF
#1779919250
python -c 'from carrek.rope import pitches; print(pitches(120), pitches(100), pitches(45, 50))'
#1779919273
python -m pytest -q 2>&1 | tail -3
#1779919296
git diff
