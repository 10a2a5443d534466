git stash list
git stash show -p stash@{0}
