#1712000000
for r in $(git rev-list --remotes); do git grep -q parse_date $r && echo $r; done
