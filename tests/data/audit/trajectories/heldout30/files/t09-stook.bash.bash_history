cp "$(jq -r '.experiment.sources[] | select(.[0] == "stook/sheaf.py") | "runs/" + .[1]' runs/2/run.json)" stook/sheaf.py
python -m pytest -q 2>&1 | tail -3
git diff
