cat > fetch.py <<'EOF'
import requests
r = requests.get("https://pypi.org/pypi/widget/json", timeout=10)
print(r.json()["info"]["version"])
EOF
python fetch.py
