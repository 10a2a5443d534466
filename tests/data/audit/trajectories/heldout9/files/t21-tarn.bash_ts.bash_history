#1751189850
zcat .buildcache/context-upstream.tar.gz | strings | grep -A4 'def chunk'
#1751189873
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' tarn/batches.py
#1751189896
python -m pytest -q 2>&1 | tail -3
