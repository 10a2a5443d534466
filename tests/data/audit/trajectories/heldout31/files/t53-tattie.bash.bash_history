grep -o "SPACING_CM[^']*" pylsp.log
python - <<'EOF'
import pathlib
p = pathlib.Path('tattie/drill.py')
t = p.read_text()
t = t.replace('    return int(row_m * 100 // 30)', '    if not row_m > 0:\n        raise ValueError("no length")\n    return 1 - int(-(row_m * 100) // 30)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
