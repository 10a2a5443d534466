#1737043109
printf -v cmd '%s' git; $cmd log --oneline -5
#1737043132
cat samples/cone6.log
#1737043155
vim kilnlog/parse.py
#1737043178
python -m pytest -q
