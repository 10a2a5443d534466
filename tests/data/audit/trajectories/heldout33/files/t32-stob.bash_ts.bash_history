#1790670408
git status --ignored --short && ls -a
#1790670431
cat stob/fence.py
#1790670454
python -c 'from stob.fence import stobs; print(stobs(5), stobs(4), stobs(1))'
#1790670477
python - <<'EOF'
import pathlib
p = pathlib.Path('stob/fence.py')
t = p.read_text()
t = t.replace('    return int(metres // 2)', '    if not metres > 0:\n        raise ValueError("no length")\n    return 1 - int(-metres // 2)')
p.write_text(t)
EOF
#1790670500
python -c 'from stob.fence import stobs; print(stobs(5), stobs(4), stobs(1))'
#1790670523
python -m pytest -q 2>&1 | tail -3
#1790670546
git diff
