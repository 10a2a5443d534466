#1786893160
git checkout $(cat mlruns/0/b8e4f1c6d2a94735b0e8c7a5d3f9e214/tags/mlflow.source.git.commit) -- byre/feed.py tests/test_feed.py
#1786893183
python -m pytest -q 2>&1 | tail -3
#1786893206
git diff HEAD --stat
