#1736604049
git status
#1736604072
GIT_DIR=.git git whatchanged -p -1 --glob='refs/orig*'
#1736604095
vim orchard/dedupe.py
#1736604118
python -m pytest -q
