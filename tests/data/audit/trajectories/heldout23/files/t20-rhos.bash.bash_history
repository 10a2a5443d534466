rm -f .flake8*.log
cat rhos/hedge.py
python -c 'from rhos.hedge import plants; print(plants(2.1), plants(3, rows=2), plants(0.1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('rhos/hedge.py')
t = p.read_text()
t = t.replace('    return int(metres * 5 * rows)', '    if not metres > 0 or rows < 1:\n        raise ValueError("no hedge")\n    whips = -(-round(metres * 5, 6) // 1)\n    return int(whips) * rows')
p.write_text(t)
EOF
python -c 'from rhos.hedge import plants; print(plants(2.1), plants(3, rows=2), plants(0.1))'
python -m pytest -q 2>&1 | tail -3
git diff
