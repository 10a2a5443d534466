#1754627233
grep -rn --exclude-dir=.svn 'def hms' .
#1754627256
cat kyle/clock.py
#1754627279
python -c 'from kyle.clock import hms; print(hms(3725), hms(59))'
#1754627302
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
#1754627325
python -c 'from kyle.clock import hms; print(hms(3725), hms(59))'
#1754627348
python -m pytest -q 2>&1 | tail -3
#1754627371
git diff
