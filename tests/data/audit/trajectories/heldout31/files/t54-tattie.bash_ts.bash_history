#1788786492
rm -f pylsp.log && git status --short
#1788786515
cat tattie/drill.py
#1788786538
python -c 'from tattie.drill import tubers; print(tubers(3), tubers(1), tubers(0.1))'
#1788786561
python - <<'EOF'
import pathlib
p = pathlib.Path('tattie/drill.py')
t = p.read_text()
t = t.replace('    return int(row_m * 100 // 30)', '    if not row_m > 0:\n        raise ValueError("no length")\n    return 1 - int(-(row_m * 100) // 30)')
p.write_text(t)
EOF
#1788786584
python -c 'from tattie.drill import tubers; print(tubers(3), tubers(1), tubers(0.1))'
#1788786607
python -m pytest -q 2>&1 | tail -3
#1788786630
git diff
