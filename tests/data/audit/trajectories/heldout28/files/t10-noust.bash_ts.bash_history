#1783314435
tar -xjOf conda-bld/noarch/noust-0.2-py_0.tar.bz2 info/recipe/meta.yaml | grep -n git_rev
#1783314458
git show --stat 2a05863
#1783314481
cat noust/tar.py
#1783314504
python -c 'from noust.tar import tins; print(tins(18), tins(20), tins(1))'
#1783314527
python - <<'EOF'
import pathlib
p = pathlib.Path('noust/tar.py')
t = p.read_text()
t = t.replace('    return int(length_ft // 6)', '    if not length_ft > 0:\n        raise ValueError("no hull")\n    return -int(-(2 * length_ft) // 6)')
p.write_text(t)
EOF
#1783314550
python -c 'from noust.tar import tins; print(tins(18), tins(20), tins(1))'
#1783314573
python -m pytest -q 2>&1 | tail -3
#1783314596
git diff
