cat .git/info/exclude; wc -c pip-reports/*.json
cat stob/fence.py
python -c 'from stob.fence import stobs; print(stobs(5), stobs(4), stobs(1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('stob/fence.py')
t = p.read_text()
t = t.replace('    return int(metres // 2)', '    if not metres > 0:\n        raise ValueError("no length")\n    return 1 - int(-metres // 2)')
p.write_text(t)
EOF
python -c 'from stob.fence import stobs; print(stobs(5), stobs(4), stobs(1))'
python -m pytest -q 2>&1 | tail -3
git diff
