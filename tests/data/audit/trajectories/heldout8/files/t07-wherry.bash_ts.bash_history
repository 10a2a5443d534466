#1750311508
git fetch upstream-nightly.bundle main:refs/remotes/nightly/main
#1750311531
git checkout nightly/main -- wherry tests
#1750311554
python -m pytest -q 2>&1 | tail -3
