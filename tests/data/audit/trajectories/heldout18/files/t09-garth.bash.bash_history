python - <<'EOF'
from importlib.machinery import SourceFileLoader
m = SourceFileLoader('upstream', 'garth/weights.py.1').load_module()
print(m.stones(70), m.stones(80))
try:
    m.stones(-1)
except Exception as e:
    print(type(e).__name__)
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('garth/weights.py')
t = p.read_text()
t = t.replace('    return f"{int(kg / 6.35)} st"', '    if kg < 0:\n        raise ValueError("negative weight")\n    total_lb = int(kg / 0.45359237 + 0.5)\n    st, lb = divmod(total_lb, 14)\n    return f"{st} st {lb} lb"')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
