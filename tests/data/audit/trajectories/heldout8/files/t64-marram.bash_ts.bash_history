#1751120358
ls .idea/shelf
#1751120381
patch -p1 < .idea/shelf/Upstream_fix/shelved.patch
#1751120404
python -m pytest -q 2>&1 | tail -3
