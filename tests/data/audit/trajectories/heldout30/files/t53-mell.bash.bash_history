sed -n '/^tests/,$p' stake.code-search
python - <<'EOF'
import pathlib
p = pathlib.Path('mell/hammer.py')
t = p.read_text()
t = t.replace('    return int(depth_cm * 3)', '    if not depth_cm > 0:\n        raise ValueError("no depth")\n    return 3 - int(-(depth_cm * 4) // 1)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
