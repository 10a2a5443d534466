git stash -u
make test
git stash list
git stash apply
git stash drop
