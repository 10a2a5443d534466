awk '/keep-around/{print $1}' .git/packed-refs | xargs -I{} git show --stat {}
git show 3e7b205^2 -- beacon/retry.py
vim beacon/retry.py
python -m pytest -q
