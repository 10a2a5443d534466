git stash save wip
git stash apply stash@{0}
git stash drop
