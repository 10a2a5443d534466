#1742068626
git am --abort
#1742068649
python - <<'EOF'
import pathlib
p = pathlib.Path("cobble/csvout.py")
s = p.read_text()
s = s.replace("""(sep, '"', "\\n")""", """(sep, '"', "\\r", "\\n")""")
s = s.replace("""        return '"' + value + '"'""", """        escaped = value.replace('"', '""')
        return f'"{escaped}"'""")
p.write_text(s)
EOF
#1742068672
echo cHl0aG9uIC1tIHB5dGVzdCAtcQ== | base64 -d | sh
#1742068695
git diff --stat
