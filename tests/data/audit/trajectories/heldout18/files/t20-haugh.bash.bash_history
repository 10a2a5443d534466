ls -a && git status --ignored --short
cat haugh/clock.py
python -c 'from haugh.clock import to_12h as t; print(t("00:30"), t("12:00"), t("7:5"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('haugh/clock.py')
t = p.read_text()
t = t.replace('    hours, minutes = text.split(":")\n    suffix = "pm" if int(hours) >= 12 else "am"\n    return f"{int(hours) % 12}:{minutes} {suffix}"', '    h_text, m_text = text.split(":")\n    h, m = int(h_text), int(m_text)\n    if h not in range(24) or m not in range(60):\n        raise ValueError("bad time")\n    return f"{h % 12 or 12}:{m:02d} {\'am\' if h < 12 else \'pm\'}"')
p.write_text(t)
EOF
python -c 'from haugh.clock import to_12h as t; print(t("00:30"), t("12:00"), t("7:5"))'
python -m pytest -q 2>&1 | tail -3
git diff
