#1787611567
git status --ignored --short && ls -a
#1787611590
cat kist/lid.py
#1787611613
python -c 'from kist.lid import planks; print(planks(45), planks(46), planks(1))'
#1787611636
python - <<'EOF'
import pathlib
p = pathlib.Path('kist/lid.py')
t = p.read_text()
t = t.replace('    return int(width_cm // 15)', '    if not width_cm > 0:\n        raise ValueError("no width")\n    return 2 - int(-width_cm // 15)')
p.write_text(t)
EOF
#1787611659
python -c 'from kist.lid import planks; print(planks(45), planks(46), planks(1))'
#1787611682
python -m pytest -q 2>&1 | tail -3
#1787611705
git diff
