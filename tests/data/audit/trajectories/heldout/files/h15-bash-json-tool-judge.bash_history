ls
python -m json.tool judge/answers.json | head -40
