#1712000000
dig() {
  git log --all -S "$1" --oneline
}
#1712000007
dig parse_header
