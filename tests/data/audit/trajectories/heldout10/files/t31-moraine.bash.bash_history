git apply ~/outbox/moraine/v2-0001-*.patch
python -m pytest -q 2>&1 | tail -3
