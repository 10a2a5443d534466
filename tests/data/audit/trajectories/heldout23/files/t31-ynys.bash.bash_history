ls -a
cat ipython_log.py
python - <<'EOF'
import pathlib
p = pathlib.Path('ynys/eggs.py')
t = p.read_text()
t = t.replace('    return eggs // 6', '    if eggs < 0:\n        raise ValueError("negative eggs")\n    full, rest = divmod(eggs, 6)\n    return full + (1 if rest else 0)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
