git branch -r | xargs -n1 git log -1 -p
