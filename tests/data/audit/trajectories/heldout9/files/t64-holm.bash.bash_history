git show f8be1d4:holm/ratio.py
cat holm/ratio.py
python -c 'from holm.ratio import percent; print(percent(1, 4), percent(1, 3))'
sed -i 's|    return int(part \* 100 / whole)|    return 0.0 if not whole else round(100 * part / whole, 1)|' holm/ratio.py
python -c 'from holm.ratio import percent; print(percent(1, 4), percent(1, 3))'
python -m pytest -q 2>&1 | tail -3
git diff
