#1776537439
cat .git/info/exclude; git check-ignore -v clwt/pay.py.html
#1776537462
cat clwt/pay.py
#1776537485
python -c 'from clwt.pay import wage; print(wage(40, 12.0), wage(44, 12.0), wage(41.5, 10.0))'
#1776537508
python - <<'EOF'
import pathlib
p = pathlib.Path('clwt/pay.py')
t = p.read_text()
t = t.replace('    return hours * rate', '    if min(hours, rate) < 0:\n        raise ValueError("negative pay")\n    over = max(0, hours - 40)\n    return round(rate * (hours + over / 2), 2)')
p.write_text(t)
EOF
#1776537531
python -c 'from clwt.pay import wage; print(wage(40, 12.0), wage(44, 12.0), wage(41.5, 10.0))'
#1776537554
python -m pytest -q 2>&1 | tail -3
#1776537577
git diff
