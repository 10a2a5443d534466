cd ~/task
git status
printf '%s\n' origin/main upstream/dev | xargs -I{} git diff HEAD {} -- src/
vim src/limiter/window.py
