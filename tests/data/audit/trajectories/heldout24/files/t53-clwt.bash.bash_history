sed -n '/<pre/,/<\/pre>/p' clwt/pay.py.html | sed 's/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g'
python - <<'EOF'
import pathlib
p = pathlib.Path('clwt/pay.py')
t = p.read_text()
t = t.replace('    return hours * rate', '    if min(hours, rate) < 0:\n        raise ValueError("negative pay")\n    over = max(0, hours - 40)\n    return round(rate * (hours + over / 2), 2)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
