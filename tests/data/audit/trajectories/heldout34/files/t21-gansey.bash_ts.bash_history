#1792512661
diff gansey/yarn.py gansey/flycheck_yarn.py
#1792512684
python - <<'EOF'
import pathlib
p = pathlib.Path('gansey/yarn.py')
t = p.read_text()
t = t.replace('    return metres // 180', '    if not metres > 0:\n        raise ValueError("no yarn")\n    return 1 - (-metres // 180)')
p.write_text(t)
EOF
#1792512707
python -m pytest -q 2>&1 | tail -3
