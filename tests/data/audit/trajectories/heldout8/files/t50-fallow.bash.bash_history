find . -path ./.git -prune -o -newer fallow/grid.py -type f -print -exec cat {} \;
sed -i 's/        if (dr, dc) != (0, 0)$/        if (dr, dc) != (0, 0) and 0 <= row + dr < rows and 0 <= col + dc < cols/' fallow/grid.py
python -m pytest -q 2>&1 | tail -3
