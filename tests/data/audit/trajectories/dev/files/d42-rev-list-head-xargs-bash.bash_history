git rev-list -n 20 HEAD | xargs -n1 git show --stat | head
