eval "$(echo Z2l0IGxvZyAtLWFsbCAtLW9uZWxpbmU= | base64 -d)"
