#1774997863
wc -l .bak.* */.bak.*
#1774997886
cat cefn/parking.py
#1774997909
python -c 'from cefn.parking import charge; print([charge(h) for h in (0.5, 1, 2.5, 12)])'
#1774997932
python - <<'EOF'
import pathlib
p = pathlib.Path('cefn/parking.py')
t = p.read_text()
t = t.replace('    return hours * 1.5', '    if hours < 0:\n        raise ValueError("negative stay")\n    return min(9.0, 1.5 * max(0, -(-(hours - 1) // 1)))')
p.write_text(t)
EOF
#1774997955
python -c 'from cefn.parking import charge; print([charge(h) for h in (0.5, 1, 2.5, 12)])'
#1774997978
python -m pytest -q 2>&1 | tail -3
#1774998001
git diff
