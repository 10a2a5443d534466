python3 - <<'EOF'
import subprocess
args = ['git', 'log', '--all', '--format=%H']
for h in subprocess.run(args, capture_output=True, text=True).stdout.split():
    print(h)
EOF
