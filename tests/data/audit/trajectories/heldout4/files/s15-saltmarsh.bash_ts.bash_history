#1735017736
git tag --merged HEAD
#1735017759
git diff v2.4.0 -- saltmarsh
#1735017782
vim saltmarsh/units.py
#1735017805
python -m pytest -q
#1735017828
git commit -am 'Round half away from zero in to_fahrenheit'
