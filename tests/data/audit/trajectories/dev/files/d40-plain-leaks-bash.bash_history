git log --all --oneline | head
