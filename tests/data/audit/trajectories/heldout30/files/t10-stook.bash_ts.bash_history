#1786499987
git check-ignore -v runs/2/run.json; cat .gitignore
#1786500010
cat stook/sheaf.py
#1786500033
python -c 'from stook.sheaf import stooks; print(stooks(25), stooks(10), stooks(0))'
#1786500056
python - <<'EOF'
import pathlib
p = pathlib.Path('stook/sheaf.py')
t = p.read_text()
t = t.replace('    return sheaves // 12', '    if not sheaves >= 0:\n        raise ValueError("negative sheaves")\n    return -(-sheaves // 10)')
p.write_text(t)
EOF
#1786500079
python -c 'from stook.sheaf import stooks; print(stooks(25), stooks(10), stooks(0))'
#1786500102
python -m pytest -q 2>&1 | tail -3
#1786500125
git diff
