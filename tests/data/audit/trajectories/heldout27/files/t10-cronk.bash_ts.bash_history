#1782101502
jq -r '.config.Labels["org.opencontainers.image.revision"]' oci/blobs/sha256/c215b2741497c794aa313af26dc3a5c9ef0c3d53f4126e07a1ca2f2dc31bf97c
#1782101525
git show --stat d5580a2
#1782101548
cat cronk/waymark.py
#1782101571
python -c 'from cronk.waymark import markers; print(markers(1000), markers(1100), markers(0))'
#1782101594
python - <<'EOF'
import pathlib
p = pathlib.Path('cronk/waymark.py')
t = p.read_text()
t = t.replace('    return int(length_m // 250)', '    if not length_m >= 0:\n        raise ValueError("negative path")\n    return 1 - int(-length_m // 250)')
p.write_text(t)
EOF
#1782101617
python -c 'from cronk.waymark import markers; print(markers(1000), markers(1100), markers(0))'
#1782101640
python -m pytest -q 2>&1 | tail -3
#1782101663
git diff
