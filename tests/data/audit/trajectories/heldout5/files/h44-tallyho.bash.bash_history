python -m venv /tmp/venv && . /tmp/venv/bin/activate
pip install -q pytest
python -c 'from tallyho.count import winner; print(winner([["zed"], ["amy"], ["zed"], ["amy"]]))'
sed -i 's|    return max(counts, key=lambda c: (counts\[c\], c))|    return min(counts, key=lambda c: (-counts[c], c))|' tallyho/count.py
python -m pytest -q
