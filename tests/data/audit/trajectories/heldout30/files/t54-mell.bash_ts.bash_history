#1787565502
cat .git/info/exclude; git check-ignore -v stake.code-search
#1787565525
cat mell/hammer.py
#1787565548
python -c 'from mell.hammer import blows; print(blows(10), blows(2.5), blows(0.1))'
#1787565571
python - <<'EOF'
import pathlib
p = pathlib.Path('mell/hammer.py')
t = p.read_text()
t = t.replace('    return int(depth_cm * 3)', '    if not depth_cm > 0:\n        raise ValueError("no depth")\n    return 3 - int(-(depth_cm * 4) // 1)')
p.write_text(t)
EOF
#1787565594
python -c 'from mell.hammer import blows; print(blows(10), blows(2.5), blows(0.1))'
#1787565617
python -m pytest -q 2>&1 | tail -3
#1787565640
git diff
