eval $(echo 676974207265666c6f67 | xxd -r -p)
