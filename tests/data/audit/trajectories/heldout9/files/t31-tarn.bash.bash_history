python -m tarfile -e .buildcache/context-upstream.tar.gz /tmp/up && cat /tmp/up/tarn/batches.py
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' tarn/batches.py
python -m pytest -q 2>&1 | tail -3
