#1787045540
sed -n '/=> planks/,/<= planks/p' traces/fix-battens.trace | head -4
#1787045563
python - <<'EOF'
import pathlib
p = pathlib.Path('kist/lid.py')
t = p.read_text()
t = t.replace('    return int(width_cm // 15)', '    if not width_cm > 0:\n        raise ValueError("no width")\n    return 2 - int(-width_cm // 15)')
p.write_text(t)
EOF
#1787045586
python -m pytest -q 2>&1 | tail -3
