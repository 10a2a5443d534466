git diff
cat quillon/labels.py
python -c 'from quillon.labels import truncate as t; print(repr(t("status bar text", 8)), repr(t("abc", 0)), repr(t("abc", 5)))'
sed -i 's/    return text\[:width\] + ELLIPSIS/    return text[: max(width - 1, 0)] + ELLIPSIS if width > 0 else ""/' quillon/labels.py
python -c 'from quillon.labels import truncate as t; print(repr(t("status bar text", 8)), repr(t("abc", 0)), repr(t("abc", 5)))'
python -m pytest -q 2>&1 | tail -3
git diff
