#1730000000
make test
#1730000009
git diff
#1730000018
git log --oneline -3
