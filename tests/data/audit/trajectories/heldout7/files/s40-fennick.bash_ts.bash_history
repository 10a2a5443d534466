#1748038221
python -c 'import importlib; m = importlib.import_module("fennick.batches"); print(m.chunked([1, 2, 3], 2))'
#1748038244
cat fennick/batches.py
#1748038267
python -c 'from fennick.batches import chunked; print(chunked([1, 2, 3, 4, 5], 2), chunked([], 3))'
#1748038290
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' fennick/batches.py
#1748038313
python -c 'from fennick.batches import chunked; print(chunked([1, 2, 3, 4, 5], 2), chunked([], 3))'
#1748038336
python -m pytest -q 2>&1 | tail -3
#1748038359
git diff
