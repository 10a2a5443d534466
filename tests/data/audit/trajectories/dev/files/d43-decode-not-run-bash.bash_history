echo Z2l0IGxvZyAtLWFsbA== | base64 -d
eval "$(direnv export bash)"
