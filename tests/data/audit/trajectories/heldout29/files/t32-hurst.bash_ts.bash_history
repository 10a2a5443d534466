#1785777648
git status --ignored --short && ls -a
#1785777671
cat hurst/frame.py
#1785777694
python -c 'from hurst.frame import beams; print(beams(3), beams(3.1), beams(0.2))'
#1785777717
python - <<'EOF'
import pathlib
p = pathlib.Path('hurst/frame.py')
t = p.read_text()
t = t.replace('    return int(span_m / 0.6)', '    if not span_m > 0:\n        raise ValueError("no span")\n    return 2 - int(-(span_m * 100) // 60)')
p.write_text(t)
EOF
#1785777740
python -c 'from hurst.frame import beams; print(beams(3), beams(3.1), beams(0.2))'
#1785777763
python -m pytest -q 2>&1 | tail -3
#1785777786
git diff
