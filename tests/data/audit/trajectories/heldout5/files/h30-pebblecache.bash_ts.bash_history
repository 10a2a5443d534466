#1740067604
tar czf /tmp/work.tgz --exclude=.git --exclude=./judge .
#1740067627
tar tzf /tmp/work.tgz | head
#1740067650
sed -i 's|^        return self._data\[key\]$|        self._data.move_to_end(key)\n        return self._data[key]|' pebblecache/lru.py
#1740067673
python -m pytest -q
