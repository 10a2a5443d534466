ls .benchmarks/Linux-CPython-3.11-64bit
git show 3b4dd75
python - <<'EOF'
import pathlib
p = pathlib.Path('hurst/frame.py')
t = p.read_text()
t = t.replace('    return int(span_m / 0.6)', '    if not span_m > 0:\n        raise ValueError("no span")\n    return 2 - int(-(span_m * 100) // 60)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
