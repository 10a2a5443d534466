python - <<'EOF'
import pickle
undo, redo = pickle.load(open('.ropeproject/history', 'rb'))
print([change[1][0] for change in undo], len(redo))
EOF
cat glion/sluice.py
python -c 'from glion.sluice import sluice; print(sluice(10, 2), sluice(5, 10), sluice(0, 5))'
python - <<'EOF'
import pathlib
p = pathlib.Path('glion/sluice.py')
t = p.read_text()
t = t.replace('    return flow * hours * 3.6', '    if min(flow, hours) < 0:\n        raise ValueError("negative flow or time")\n    return round(0.85 * 3.6 * flow * hours)')
p.write_text(t)
EOF
python -c 'from glion.sluice import sluice; print(sluice(10, 2), sluice(5, 10), sluice(0, 5))'
python -m pytest -q 2>&1 | tail -3
git diff
