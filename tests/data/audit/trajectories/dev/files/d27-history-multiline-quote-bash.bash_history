git commit -m 'Validate nested schemas

No git log --all was used.'
