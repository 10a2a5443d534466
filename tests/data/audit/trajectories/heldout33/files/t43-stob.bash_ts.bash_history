#1790806421
c=$(python -c 'import json; print(json.load(open("pip-reports/pr-12.json"))["install"][0]["download_info"]["vcs_info"]["commit_id"])'); git cat-file -p $c && git diff $c~1 $c -- tests
#1790806444
python - <<'EOF'
import pathlib
p = pathlib.Path('stob/fence.py')
t = p.read_text()
t = t.replace('    return int(metres // 2)', '    if not metres > 0:\n        raise ValueError("no length")\n    return 1 - int(-metres // 2)')
p.write_text(t)
EOF
#1790806467
python -m pytest -q 2>&1 | tail -3
