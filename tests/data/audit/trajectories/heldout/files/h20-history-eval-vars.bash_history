#1712000000
a=git; b='log --all --oneline'
#1712000007
eval "$a $b" | head
