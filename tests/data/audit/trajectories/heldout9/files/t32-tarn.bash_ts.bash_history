#1752057338
cat tarn/batches.py
#1752057361
python -c 'from tarn.batches import chunk; print(chunk([1, 2, 3, 4, 5], 2), chunk([1, 2, 3, 4], 2))'
#1752057384
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' tarn/batches.py
#1752057407
python -c 'from tarn.batches import chunk; print(chunk([1, 2, 3, 4, 5], 2), chunk([1, 2, 3, 4], 2))'
#1752057430
python -m pytest -q 2>&1 | tail -3
#1752057453
git diff
#1752057476
tar -czf /tmp/work.tgz tarn tests && tar -tzf /tmp/work.tgz
