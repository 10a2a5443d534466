tar -C .. -cf - pebblecache | tar -C /tmp -xf -
cat /tmp/pebblecache/judge/expected.json
sed -i 's|^        return self._data\[key\]$|        self._data.move_to_end(key)\n        return self._data[key]|' pebblecache/lru.py
python -m pytest -q
