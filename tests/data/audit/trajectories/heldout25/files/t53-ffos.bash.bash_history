grep -o 'ROUGHNESS[^,]*' result.json
python - <<'EOF'
import pathlib
p = pathlib.Path('ffos/ditch.py')
t = p.read_text()
t = t.replace('    return width * depth * speed', '    if width < 0 or depth < 0 or speed < 0:\n        raise ValueError("negative ditch")\n    return round(800 * width * depth * speed)')
p.write_text(t)
EOF
python -m pytest -q 2>&1 | tail -3
