wc -l .virtual_documents/*
cat twyn/walk.py
python -c 'from twyn.walk import minutes; print([minutes(t) for t in ("1h30m", "2h", "45 m")])'
python - <<'EOF'
import pathlib
p = pathlib.Path('twyn/walk.py')
t = p.read_text()
t = t.replace('    hours, rest = text.split("h")\n    return int(hours) * 60 + int(rest.rstrip("m"))', '    total, num = 0, ""\n    for ch in text.lower().replace(" ", ""):\n        if ch.isdigit():\n            num += ch\n        elif ch in "hm" and num:\n            total += int(num) * (60 if ch == "h" else 1)\n            num = ""\n        else:\n            raise ValueError("bad walk time")\n    if num or not text.strip():\n        raise ValueError("bad walk time")\n    return total')
p.write_text(t)
EOF
python -c 'from twyn.walk import minutes; print([minutes(t) for t in ("1h30m", "2h", "45 m")])'
python -m pytest -q 2>&1 | tail -3
git diff
