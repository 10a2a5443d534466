#1730000000
git stash list
#1730000009
echo '# scratch' >> chart.toml
#1730000018
git stash
#1730000027
python -m pytest -q
#1730000036
git stash pop
