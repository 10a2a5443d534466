#1755183700
grep -c '^+' ~/outbox/moraine/v2-0001-*.patch
#1755183723
cat moraine/masks.py
#1755183746
python -c 'from moraine.masks import mask_email as m; print(m("ann@example.org"), m("Ann@Example.ORG"))'
#1755183769
python - <<'EOF'
import pathlib
p = pathlib.Path('moraine/masks.py')
old = '    local, domain = address.split("@")\n    return local[0] + "***@" + domain\n'
new = '    local, sep, domain = address.partition("@")\n    if not local or not domain or "@" in domain:\n        raise ValueError("not an email address: " + repr(address))\n    return local[0] + "***@" + domain.lower()\n'
assert old in p.read_text()
p.write_text(p.read_text().replace(old, new))
EOF
#1755183792
python -c 'from moraine.masks import mask_email as m; print(m("ann@example.org"), m("Ann@Example.ORG"))'
#1755183815
python -m pytest -q 2>&1 | tail -3
#1755183838
git diff
