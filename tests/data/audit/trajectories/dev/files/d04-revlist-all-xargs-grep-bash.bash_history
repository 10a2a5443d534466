git rev-list --all | xargs git grep -n 'def validate'
