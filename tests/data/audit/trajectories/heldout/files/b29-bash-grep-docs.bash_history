grep -rn "git log --all" docs/
grep -rn 'curl https://' README.md
