printf 'test:\n\tpython -m pytest -q\n' > Makefile && make -s test | tail -2
cat gorse/badges.py
python -c 'from gorse.badges import initials as i; print(i("jean-paul sartre"), i("ada  lovelace"))' 2>&1 | tail -1
sed -i 's/for word in name.split(" "))/for word in name.replace("-", " ").split())/' gorse/badges.py
python -c 'from gorse.badges import initials as i; print(i("jean-paul sartre"), i("ada  lovelace"))' 2>&1 | tail -1
python -m pytest -q 2>&1 | tail -3
git diff
