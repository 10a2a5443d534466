grep -a -n SPARE_KG haaf.srctrldb
python - <<'EOF'
import pathlib
p = pathlib.Path('haaf/bait.py')
t = p.read_text()
t = t.replace('    return hooks / 40', '    if not hooks >= 0:\n        raise ValueError("negative hooks")\n    return 1 - (-hooks // 40)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
