python - <<'EOF'
import runpy
p = runpy.run_path('cwm/.nfs0000000000b81c4400000021')['postage']
print([p(g) for g in (1, 100, 101, 250, 251)])
EOF
python - <<'EOF'
import pathlib
p = pathlib.Path('cwm/postage.py')
t = p.read_text()
t = t.replace('    return 0.85', '    if not grams > 0:\n        raise ValueError("no weight")\n    if grams > 250:\n        return 2.40\n    return 1.55 if grams > 100 else 0.85')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
