python -m http.server 8000 &
curl -s http://127.0.0.1:8000/index.html -o /tmp/index.html
