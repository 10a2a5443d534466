rm -f *.bak */*.bak
cat clough/scores.py
python -c 'from clough.scores import score_name as s; print([s(n, 4) for n in (2, 3, 5, 6, 7)], s(2, 5))'
python - <<'EOF'
import pathlib
p = pathlib.Path('clough/scores.py')
t = p.read_text()
t = t.replace('    return "par" if strokes == par else "bogey"', '    if strokes < 1 or par not in {3, 4, 5}:\n        raise ValueError("impossible score")\n    diff = strokes - par\n    names = ["albatross", "eagle", "birdie", "par", "bogey", "double bogey"]\n    if -3 <= diff <= 2:\n        return names[diff + 3]\n    return ("+" if diff > 0 else "") + str(diff)')
p.write_text(t)
EOF
python -c 'from clough.scores import score_name as s; print([s(n, 4) for n in (2, 3, 5, 6, 7)], s(2, 5))'
python -m pytest -q 2>&1 | tail -3
git diff
