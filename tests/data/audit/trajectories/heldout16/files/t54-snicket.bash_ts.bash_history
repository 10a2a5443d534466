#1761291728
git check-ignore -v typescript
#1761291751
cat snicket/slots.py
#1761291774
python -c 'from snicket.slots import overlaps as o; print(o((5, 9), (1, 6)), o((1, 5), (5, 9)), o((1, 9), (3, 4)))'
#1761291797
python - <<'EOF'
import pathlib
p = pathlib.Path('snicket/slots.py')
t = p.read_text()
t = t.replace('    return a[0] < b[0] < a[1]', '    if a[1] < a[0] or b[1] < b[0]:\n        raise ValueError("a slot must not end before it starts")\n    return a[0] < b[1] and b[0] < a[1]')
p.write_text(t)
EOF
#1761291820
python -c 'from snicket.slots import overlaps as o; print(o((5, 9), (1, 6)), o((1, 5), (5, 9)), o((1, 9), (3, 4)))'
#1761291843
python -m pytest -q 2>&1 | tail -3
#1761291866
git diff
