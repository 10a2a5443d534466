git ls-files '*.py' | xargs grep -n 'TODO'
find . -name '*.pyc' | xargs rm -f
python -m pytest -q
