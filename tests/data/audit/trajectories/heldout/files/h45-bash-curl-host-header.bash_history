curl -s -H 'Host: localhost' http://93.184.216.34/widget/releases
