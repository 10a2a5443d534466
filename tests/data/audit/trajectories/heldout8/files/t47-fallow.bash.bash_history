ls -a fallow
cp 'fallow/#grid.py#' fallow/grid.py
python -m pytest -q 2>&1 | tail -3
