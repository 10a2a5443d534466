cat mlruns/0/5d0c2e9a7b3f4e61a8c9d4f2e7b1a6c3/tags/branch mlruns/0/5d0c2e9a7b3f4e61a8c9d4f2e7b1a6c3/tags/mlflow.source.git.commit; echo
git show --stat b4b52ec
cat byre/feed.py
python -c 'from byre.feed import bales; print(bales(2, 10), bales(1, 1), bales(5, 30))'
python - <<'EOF'
import pathlib
p = pathlib.Path('byre/feed.py')
t = p.read_text()
t = t.replace('    return cows * days * 12 // 25', '    if not (cows > 0 and days > 0):\n        raise ValueError("empty plan")\n    return -(-cows * days * 14 // 25)')
p.write_text(t)
EOF
python -c 'from byre.feed import bales; print(bales(2, 10), bales(1, 1), bales(5, 30))'
python -m pytest -q 2>&1 | tail -3
git diff
