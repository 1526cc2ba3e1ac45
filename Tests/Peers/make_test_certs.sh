#!/usr/bin/env bash
# Makes a test CA and server certificates with openssl into DIR:
#   ca.pem                the CA to trust
#   good.pem/.key         localhost + 127.0.0.1, signed by the CA
#   other.pem/.key        other.example only (a hostname mismatch for localhost)
#   self.pem/.key         localhost, self-signed (not from the CA)
#   expired.pem/.key      localhost, signed by the CA, valid only in January 2020
#   cnonly.pem/.key       CN=localhost and no subjectAltName, signed by the CA
#   partial.pem/.key      DNS:w*.switchboard.test only (a partial-label wildcard), signed by the CA
#   encrypted.key         good.key's twin under a passphrase
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" >/dev/null 2>&1; }
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj "/CN=Switchboard Test CA"
sign() { # name cn san days
  quiet openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2"
  printf "subjectAltName=%s\n" "$3" > "$1.ext"
  quiet openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days "$4" -extfile "$1.ext"
}
sign good localhost "DNS:localhost,IP:127.0.0.1" 30
sign other other.example "DNS:other.example" 30
sign partial partial "DNS:w*.switchboard.test" 30
quiet openssl req -newkey rsa:2048 -nodes -keyout cnonly.key -out cnonly.csr -subj "/CN=localhost"
quiet openssl x509 -req -in cnonly.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cnonly.pem -days 30
quiet openssl pkey -in good.key -aes256 -passout pass:secret -out encrypted.key
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout self.key -out self.pem -days 30 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
# An expired certificate needs explicit dates, which `openssl ca` takes.
mkdir -p db && : > db/index.txt && echo 1000 > db/serial
cat > ca.cnf <<CNF
[ca]
default_ca = test
[test]
dir = .
database = db/index.txt
serial = db/serial
new_certs_dir = db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = anything
copy_extensions = copy
[anything]
commonName = supplied
CNF
quiet openssl req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
quiet openssl ca -batch -config ca.cnf -in expired.csr -out expired.pem -startdate 20200101000000Z -enddate 20200102000000Z
echo "$dir"
