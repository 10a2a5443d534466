python -c "import tarfile; t = tarfile.open('conda-bld/noarch/noust-0.3-py_0.tar.bz2'); print(t.extractfile('info/test/tests/test_tar.py').read().decode())"
python - <<'EOF'
import pathlib
p = pathlib.Path('noust/tar.py')
t = p.read_text()
t = t.replace('    return int(length_ft // 6)', '    if not length_ft > 0:\n        raise ValueError("no hull")\n    return -int(-(2 * length_ft) // 6)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
