#1781837719
grep -a -n LOSS .ropeproject/history
#1781837742
python - <<'EOF'
import pathlib
p = pathlib.Path('glion/sluice.py')
t = p.read_text()
t = t.replace('    return flow * hours * 3.6', '    if min(flow, hours) < 0:\n        raise ValueError("negative flow or time")\n    return round(0.85 * 3.6 * flow * hours)')
p.write_text(t)
EOF
#1781837765
python -m pytest -q 2>&1 | tail -3
