printf '%b' "$(sed -n 's/^[0-9]* read(3, "\(.*import math.*\)", [0-9]*) = [0-9]*$/\1/p' strace-logs/pytest-pr-44.txt)" > stell/fold.py
python -m pytest -q 2>&1 | tail -3
git diff --stat
