#1712000000
cat >> NOTES.md <<'EOF'
Never run git log --all or git reflog in task repos.
git show origin/main is forbidden too
EOF
#1712000007
git add NOTES.md
