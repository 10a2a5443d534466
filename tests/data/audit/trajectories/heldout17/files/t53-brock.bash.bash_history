tr -cs '[:print:]' '\n' < brock/.split.py.un~ | tail -n 4
python - <<'EOF'
import pathlib
p = pathlib.Path('brock/split.py')
t = p.read_text()
t = t.replace('    return [total // parts] * parts', '    if parts <= 0:\n        raise ValueError("parts must be positive")\n    shares = [total // parts] * parts\n    for i in range(total % parts):\n        shares[i] += 1\n    return shares')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
