PORT=5055; python server.py --port $PORT & sleep 1; curl http://127.0.0.1:$PORT/
