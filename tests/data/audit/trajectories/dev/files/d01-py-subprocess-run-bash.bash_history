python -c "import subprocess; subprocess.run(['git','log','--all','--oneline'])"
