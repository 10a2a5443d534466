readlink gansey/.#yarn.py tests/.#test_yarn.py
cat gansey/yarn.py
python -c 'from gansey.yarn import skeins; print(skeins(360), skeins(361), skeins(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('gansey/yarn.py')
t = p.read_text()
t = t.replace('    return metres // 180', '    if not metres > 0:\n        raise ValueError("no yarn")\n    return 1 - (-metres // 180)')
p.write_text(t)
EOF
python -c 'from gansey.yarn import skeins; print(skeins(360), skeins(361), skeins(1))'
python -m pytest -q 2>&1 | tail -3
git diff
