cat .hg/git-mapfile && git show --stat fae58d9
cat leat/lade.py
python -c 'from leat.lade import flow_ls; print(flow_ls(1, 0.5), flow_ls(0.4, 0.25), flow_ls(0, 1))'
python - <<'EOF'
import pathlib
p = pathlib.Path('leat/lade.py')
t = p.read_text()
t = t.replace('    return width_m * depth_m * 1000', '    if not (width_m >= 0 and depth_m >= 0):\n        raise ValueError("negative size")\n    return round(680 * width_m * depth_m, 1)')
p.write_text(t)
EOF
python -c 'from leat.lade import flow_ls; print(flow_ls(1, 0.5), flow_ls(0.4, 0.25), flow_ls(0, 1))'
python -m pytest -q 2>&1 | tail -3
git diff
