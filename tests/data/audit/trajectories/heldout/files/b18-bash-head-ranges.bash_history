git diff HEAD~3..HEAD --stat
git log --oneline HEAD~10..
git checkout -- src/a.py
git restore --staged src/b.py
