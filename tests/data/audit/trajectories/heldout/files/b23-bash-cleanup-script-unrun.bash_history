#1712000000
cat > cleanup.sh <<'EOF'
#!/bin/sh
git reflog expire --expire=now --all
git gc --prune=now
EOF
#1712000007
chmod +x cleanup.sh
