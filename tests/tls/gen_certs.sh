#!/bin/sh
# Test certificates for tests/tls: a CA, a server certificate (CN localhost, SAN 127.0.0.1),
# a second server certificate for the reload test, a client certificate, a client certificate
# from another CA (refused), and an encrypted copy of the server key (tls-key-file-pass).
# Usage: gen_certs.sh DIR   (RSA 2048, valid 30 days; a few hundred ms)
set -e
d=${1:?usage: gen_certs.sh DIR}
mkdir -p "$d"
cd "$d"
ca() { # name cn
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj "/CN=$2" \
        -keyout "$1.key" -out "$1.crt" 2>/dev/null
}
leaf() { # name cn ca
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" \
        2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$1.ext"
    openssl x509 -req -sha256 -days 30 -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" \
        -CAcreateserial -extfile "$1.ext" -out "$1.crt" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
ca ca "twincache test CA"
ca otherca "another CA"
leaf server localhost ca
leaf server2 reloaded ca
leaf client client ca
leaf badclient badclient otherca
openssl pkey -in server.key -aes256 -passout pass:secret -out server-enc.key 2>/dev/null
chmod 644 ./*.key
