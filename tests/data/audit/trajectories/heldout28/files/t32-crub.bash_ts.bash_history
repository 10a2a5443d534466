#1784220772
ls -a && git status --ignored --short
#1784220795
cat crub/wall.py
#1784220818
python -c 'from crub.wall import stones; print(stones(2), stones(1.5), stones(0.1))'
#1784220841
python - <<'EOF'
import pathlib
p = pathlib.Path('crub/wall.py')
t = p.read_text()
t = t.replace('    return int(side_m * 4 * 9)', '    if not side_m > 0:\n        raise ValueError("no wall")\n    return -int(-(side_m * 108) // 1)')
p.write_text(t)
EOF
#1784220864
python -c 'from crub.wall import stones; print(stones(2), stones(1.5), stones(0.1))'
#1784220887
python -m pytest -q 2>&1 | tail -3
#1784220910
git diff
