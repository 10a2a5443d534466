echo 'Z2l0IHJlZmxvZw==' | base64 --decode | bash
