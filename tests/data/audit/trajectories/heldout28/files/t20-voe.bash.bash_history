find .gitlab-ci-local -type f | sort
cat voe/creel.py
python -c 'from voe.creel import haul_kg; print(haul_kg(10), haul_kg(20), haul_kg(0))'
python - <<'EOF'
import pathlib
p = pathlib.Path('voe/creel.py')
t = p.read_text()
t = t.replace('    return creels * 1.5', '    if not creels >= 0:\n        raise ValueError("negative creels")\n    return round(1.35 * creels, 1)')
p.write_text(t)
EOF
python -c 'from voe.creel import haul_kg; print(haul_kg(10), haul_kg(20), haul_kg(0))'
python -m pytest -q 2>&1 | tail -3
git diff
