curl -X POST -H 'Content-Type: application/json' -d '{"x": 1}' http://localhost:5000/api/validate
curl -sf http://[::1]:5000/health
wget -qO- http://127.0.0.1:5000/metrics
