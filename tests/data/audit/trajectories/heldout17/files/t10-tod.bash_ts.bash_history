#1764030186
find . -name '*.orig' -not -path './.git/*' | sort
#1764030209
cat tod/change.py
#1764030232
python -c 'from tod.change import percent_change as p; print(p(3, 4), p(-2, -1))'
#1764030255
python - <<'EOF'
import pathlib
p = pathlib.Path('tod/change.py')
t = p.read_text()
t = t.replace('    return (new - old) / old * 100', '    if not old:\n        raise ValueError("old price is zero")\n    return round((new - old) * 100 / abs(old), 1)')
p.write_text(t)
EOF
#1764030278
python -c 'from tod.change import percent_change as p; print(p(3, 4), p(-2, -1))'
#1764030301
python -m pytest -q 2>&1 | tail -3
#1764030324
git diff
