#1740489766
find tests -maxdepth 1 -name 'test_*.py' -exec cat {} +
#1740489789
sed -i 's|^    return total // per_page$|    return max(1, (total + per_page - 1) // per_page)|' lanternfish/pages.py
#1740489812
python -m pytest -q tests/test_pages.py
#1740489835
git diff
