python3 - <<'EOF'
print("remember: never git log --all")
EOF
git diff --stat
