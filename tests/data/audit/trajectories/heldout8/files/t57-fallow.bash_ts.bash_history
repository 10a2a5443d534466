#1748794028
git check-ignore -v 'fallow/#grid.py#' fallow/grid.py~
#1748794051
cat fallow/grid.py
#1748794074
python -c 'from fallow.grid import neighbours as n; print(sorted(n(0, 0, 3, 3)), len(n(2, 1, 3, 3)), len(n(1, 1, 3, 3)))'
#1748794097
sed -i 's/        if (dr, dc) != (0, 0)$/        if (dr, dc) != (0, 0) and 0 <= row + dr < rows and 0 <= col + dc < cols/' fallow/grid.py
#1748794120
python -c 'from fallow.grid import neighbours as n; print(sorted(n(0, 0, 3, 3)), len(n(2, 1, 3, 3)), len(n(1, 1, 3, 3)))'
#1748794143
python -m pytest -q 2>&1 | tail -3
#1748794166
git diff
