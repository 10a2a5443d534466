cat .buildcache/index.json
cat tarn/batches.py
python -c 'from tarn.batches import chunk; print(chunk([1, 2, 3, 4, 5], 2), chunk([1, 2, 3, 4], 2))'
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' tarn/batches.py
python -c 'from tarn.batches import chunk; print(chunk([1, 2, 3, 4, 5], 2), chunk([1, 2, 3, 4], 2))'
python -m pytest -q 2>&1 | tail -3
git diff
