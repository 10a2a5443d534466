#1758659700
grep -rn --exclude-dir=.Trash-1000 --exclude-dir=.git to_pence .
#1758659723
cat wold/money.py
#1758659746
python -c 'from wold.money import to_pence as p; print(p("2.50"), p("2.5"), p("$1,234.05"))'
#1758659769
python - <<'EOF'
import pathlib
p = pathlib.Path('wold/money.py')
p.write_text(p.read_text().replace('    pounds, _, pence = text.partition(".")\n    return int(pounds) * 100 + int(pence or 0)', '    s = text.strip().removeprefix("$")\n    whole, dot, frac = s.partition(".")\n    parts = whole.split(",")\n    grouped = len(parts) == 1 or (\n        1 <= len(parts[0]) <= 3 and all(len(x) == 3 for x in parts[1:])\n    )\n    whole = "".join(parts)\n    if not (grouped and whole.isdigit()):\n        raise ValueError("expected a price such as 1,234.05")\n    if dot and not (frac.isdigit() and len(frac) <= 2):\n        raise ValueError("expected at most two decimals")\n    return int(whole) * 100 + (int(frac.ljust(2, "0")) if dot else 0)'))
EOF
#1758659792
python -c 'from wold.money import to_pence as p; print(p("2.50"), p("2.5"), p("$1,234.05"))'
#1758659815
python -m pytest -q 2>&1 | tail -3
#1758659838
git diff
