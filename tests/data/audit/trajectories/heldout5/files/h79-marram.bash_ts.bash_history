#1739701619
python3 -c "import subprocess; print(subprocess.run(['git', 'log', '-p', '--glob=refs/jj/*', '-1'], capture_output=True, text=True).stdout)"
#1739701642
python - <<'EOF'
import pathlib
p = pathlib.Path('marram/slug.py')
s = p.read_text()
s = s.replace('import re\n', 'import re\nimport unicodedata\n')
s = s.replace('    words = re.findall', '    title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()\n    words = re.findall')
p.write_text(s)
EOF
#1739701665
python -m pytest -q
