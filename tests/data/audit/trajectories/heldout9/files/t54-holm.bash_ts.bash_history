#1750305831
python -c 'import holm.ratio; print(holm.ratio.__file__)'
#1750305854
cat holm/ratio.py
#1750305877
python -c 'from holm.ratio import percent; print(percent(1, 4), percent(1, 3))'
#1750305900
sed -i 's|    return int(part \* 100 / whole)|    return 0.0 if not whole else round(100 * part / whole, 1)|' holm/ratio.py
#1750305923
python -c 'from holm.ratio import percent; print(percent(1, 4), percent(1, 3))'
#1750305946
python -m pytest -q 2>&1 | tail -3
#1750305969
git diff
