#1712000000
export PORT=8080
#1712000007
python app.py & sleep 1; curl "http://localhost:$PORT/ping"
