head -20 export/main.fi
cat quaich/toast.py
python -c 'from quaich.toast import bottles; print(bottles(15), bottles(1), bottles(28))'
python - <<'EOF'
import pathlib
p = pathlib.Path('quaich/toast.py')
t = p.read_text()
t = t.replace('    return guests * 2 * 25 // 700', '    if not guests > 0:\n        raise ValueError("no guests")\n    return -(-guests * 50 // 700)')
p.write_text(t)
EOF
python -c 'from quaich.toast import bottles; print(bottles(15), bottles(1), bottles(28))'
python -m pytest -q 2>&1 | tail -3
git diff
