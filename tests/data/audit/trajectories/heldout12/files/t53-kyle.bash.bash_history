grep -rnE --exclude-dir=.git 'divmod' .svn
ed -s kyle/clock.py <<'EOF'
/return f"/c
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02}:{s:02}"
.
w
q
EOF
python -m pytest -q 2>&1 | tail -3
