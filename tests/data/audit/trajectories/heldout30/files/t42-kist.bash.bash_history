grep -c '=> planks' traces/*.trace
cat kist/lid.py
python -c 'from kist.lid import planks; print(planks(45), planks(46), planks(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('kist/lid.py')
t = p.read_text()
t = t.replace('    return int(width_cm // 15)', '    if not width_cm > 0:\n        raise ValueError("no width")\n    return 2 - int(-width_cm // 15)')
p.write_text(t)
EOF
python -c 'from kist.lid import planks; print(planks(45), planks(46), planks(1))'
python -m pytest -q 2>&1 | tail -3
git diff
