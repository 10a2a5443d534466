python -c "import tarfile; t = tarfile.open('oci/blobs/sha256/45cca49e7dc847105c1bf509b9f9fd39822504f5a3876471df89309eefc60f7f'); print(t.extractfile('app/tests/test_waymark.py').read().decode())"
python - <<'EOF'
import pathlib
p = pathlib.Path('cronk/waymark.py')
t = p.read_text()
t = t.replace('    return int(length_m // 250)', '    if not length_m >= 0:\n        raise ValueError("negative path")\n    return 1 - int(-length_m // 250)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
