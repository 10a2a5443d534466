python - <<'EOF'
import runpy
c = runpy.run_path('cefn/.bak.0.parking.py')['charge']
print([c(h) for h in (0.5, 1, 2.5, 12)])
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('cefn/parking.py')
t = p.read_text()
t = t.replace('    return hours * 1.5', '    if hours < 0:\n        raise ValueError("negative stay")\n    return min(9.0, 1.5 * max(0, -(-(hours - 1) // 1)))')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
