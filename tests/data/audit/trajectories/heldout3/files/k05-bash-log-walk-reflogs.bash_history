cd ledgerline
git log -g --format='%h %gs' | head -5
vim ledgerline/posting.py
