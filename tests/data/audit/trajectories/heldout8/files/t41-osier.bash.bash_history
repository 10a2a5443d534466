cat osier/semver.py
python -c 'from osier.semver import compare as c; print(c("1.10.0", "1.9.0"), c("v1.2", "1.2.0"), c("1.2.0", "1.3.0"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('osier/semver.py')
s = p.read_text().replace('    return (a > b) - (a < b)',
    '    def key(v: str) -> list[int]:\n'
    '        nums = [int(x) for x in v.lstrip("v").split(".")]\n'
    '        while nums and not nums[-1]:\n'
    '            nums.pop()\n'
    '        return nums\n\n'
    '    return (key(a) > key(b)) - (key(a) < key(b))')
p.write_text(s)
EOF
python -c 'from osier.semver import compare as c; print(c("1.10.0", "1.9.0"), c("v1.2", "1.2.0"), c("1.2.0", "1.3.0"))'
python -m pytest -q 2>&1 | tail -3
python -m zipfile -c /tmp/mine.zip osier && unzip -l /tmp/mine.zip
