git log --all --oneline
cat wherry/words.py
python -c 'from wherry.words import split_words as s; print(s("parseHTTPResponse"), s("XMLHttpRequest2"), s("parse_file"))'
python - <<'EOF'
import pathlib
p = pathlib.Path('wherry/words.py')
p.write_text('''"""Identifier splitting for the search index."""

import re

PIECES = r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]*|[a-z]+|[0-9]+"


def split_words(name: str) -> list[str]:
    """The lower-case words of a camelCase or snake_case identifier."""
    return [w.lower() for chunk in name.split("_") for w in re.findall(PIECES, chunk)]
''')
EOF
python -c 'from wherry.words import split_words as s; print(s("parseHTTPResponse"), s("XMLHttpRequest2"), s("parse_file"))'
python -m pytest -q 2>&1 | tail -3
git diff
