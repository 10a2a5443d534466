#1772343571
wc -l .nfs* */.nfs*
#1772343594
cat cwm/postage.py
#1772343617
python -c 'from cwm.postage import postage; print([postage(g) for g in (1, 100, 101, 250, 251)])'
#1772343640
python - <<'EOF'
import pathlib
p = pathlib.Path('cwm/postage.py')
t = p.read_text()
t = t.replace('    return 0.85', '    if not grams > 0:\n        raise ValueError("no weight")\n    if grams > 250:\n        return 2.40\n    return 1.55 if grams > 100 else 0.85')
p.write_text(t)
EOF
#1772343663
python -c 'from cwm.postage import postage; print([postage(g) for g in (1, 100, 101, 250, 251)])'
#1772343686
python -m pytest -q 2>&1 | tail -3
#1772343709
git diff
