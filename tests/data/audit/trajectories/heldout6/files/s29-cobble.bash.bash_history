git status
echo Z2l0IGFtIC0tc2hvdy1jdXJyZW50LXBhdGNoPWRpZmY= | base64 -d | sh
python - <<'EOF'
import pathlib
p = pathlib.Path("cobble/csvout.py")
s = p.read_text()
s = s.replace("""(sep, '"', "\\n")""", """(sep, '"', "\\r", "\\n")""")
s = s.replace("""        return '"' + value + '"'""", """        escaped = value.replace('"', '""')
        return f'"{escaped}"'""")
p.write_text(s)
EOF
python -m pytest -q
