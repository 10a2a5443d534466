#1793340825
rm -rf strace-logs && git status --short
#1793340848
cat stell/fold.py
#1793340871
python -c 'from stell.fold import pens; print(pens(81), pens(80), pens(1))'
#1793340894
python - <<'EOF'
import pathlib
p = pathlib.Path('stell/fold.py')
t = p.read_text()
t = t.replace('    return ewes // 40', '    if not ewes > 0:\n        raise ValueError("no ewes")\n    return -(-ewes // 40)')
p.write_text(t)
EOF
#1793340917
python -c 'from stell.fold import pens; print(pens(81), pens(80), pens(1))'
#1793340940
python -m pytest -q 2>&1 | tail -3
#1793340963
git diff
