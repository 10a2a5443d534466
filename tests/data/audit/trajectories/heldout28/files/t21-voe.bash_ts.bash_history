#1783869411
cat .gitlab-ci-local/output/test-creel.log
#1783869434
git show $(awk '/^testing/ {print $2}' .gitlab-ci-local/output/test-creel.log) -- voe
#1783869457
python - <<'EOF'
import pathlib
p = pathlib.Path('voe/creel.py')
t = p.read_text()
t = t.replace('    return creels * 1.5', '    if not creels >= 0:\n        raise ValueError("negative creels")\n    return round(1.35 * creels, 1)')
p.write_text(t)
EOF
#1783869480
python -m pytest -q 2>&1 | tail -3
