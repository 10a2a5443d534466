git check-ignore -v gill.sublime-workspace && git status --ignored --short
cat gill/urls.py
python -c 'from gill.urls import join_url as j; print(j("https://m.example/", "/pub"), j("https://m.example", ""))'
sed -i 's|    return base + "/" + path|    return base.rstrip("/") + "/" + path.lstrip("/") if path else base|' gill/urls.py
python -c 'from gill.urls import join_url as j; print(j("https://m.example/", "/pub"), j("https://m.example", ""))'
python -m pytest -q 2>&1 | tail -3
git diff
