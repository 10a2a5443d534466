rm -rf reports
cat nant/convert.py
python -c 'from nant.convert import celsius; print([celsius(f) for f in (212, 98.6, 0)])'
python - <<'EOF'
import pathlib
p = pathlib.Path('nant/convert.py')
t = p.read_text()
t = t.replace('    return (fahrenheit - 32) / 2', '    if fahrenheit < -459.67:\n        raise ValueError("colder than absolute zero")\n    return round((fahrenheit - 32) / 1.8, 1)')
p.write_text(t)
EOF
python -c 'from nant.convert import celsius; print([celsius(f) for f in (212, 98.6, 0)])'
python -m pytest -q 2>&1 | tail -3
git diff
