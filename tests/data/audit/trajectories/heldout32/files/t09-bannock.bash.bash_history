grep -rn 'pytest.raises' reports
python - <<'EOF'
import pathlib
p = pathlib.Path('bannock/griddle.py')
t = p.read_text()
t = t.replace('    return cakes // 6', '    if not cakes > 0:\n        raise ValueError("no cakes")\n    return -(-cakes // 6)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
