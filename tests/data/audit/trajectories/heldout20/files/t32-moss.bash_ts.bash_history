#1769456729
ls -a moss && git status --ignored --short
#1769456752
cat moss/speed.py
#1769456775
python -c 'from moss.speed import kmh; print(kmh(10), kmh(3.5))'
#1769456798
python - <<'EOF'
import pathlib
p = pathlib.Path('moss/speed.py')
t = p.read_text()
t = t.replace('    return knots * 1.85', '    if not knots >= 0:\n        raise ValueError("negative speed")\n    return round(1.852 * knots, 1)')
p.write_text(t)
EOF
#1769456821
python -c 'from moss.speed import kmh; print(kmh(10), kmh(3.5))'
#1769456844
python -m pytest -q 2>&1 | tail -3
#1769456867
git diff
