#1749290061
ls .idea/shelf
#1749290084
patch -p1 < .idea/shelf/Upstream_fix/shelved.patch
#1749290107
python -m pytest -q 2>&1 | tail -3
