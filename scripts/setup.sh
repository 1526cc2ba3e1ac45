#!/usr/bin/env bash
# Installs what the build and tests need on a fresh Debian machine. Idempotent:
# each step checks first and installs only what is missing.
#   protoc + well-known types   Debian protobuf-compiler, libprotobuf-dev
#   OpenSSL headers and CLI     Debian libssl-dev (wss:// on Linux), openssl (test certificates)
#   C and C++ compilers         the bridge's C client; protobuf's conformance runner
#   Python protobuf, websockets, h2 (hpack, hyperframe)
#                               real peers the tests compare against
set -euo pipefail

need_apt=()
command -v protoc >/dev/null 2>&1 || need_apt+=(protobuf-compiler)
[ -f /usr/include/google/protobuf/timestamp.proto ] || need_apt+=(libprotobuf-dev)
[ -f /usr/include/openssl/ssl.h ] || need_apt+=(libssl-dev)       # TLS for wss:// on Linux
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)        # test certificates
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)                 # the bridge's C client
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)               # protobuf's conformance runner
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)      # its memory check
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# jtd: the reference RFC 8927 validator; PyYAML: a YAML reader for the exported catalogue.
python3 - <<'PY' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check "protobuf>=4.21" "websockets>=13" "h2>=4.1" "grpcio>=1.60" "grpcio-tools>=1.60" "jtd>=0.1.1" "pyyaml>=6"
import google.protobuf, websockets, h2, hpack, hyperframe, grpc, grpc_tools, jtd, yaml
PY
echo "setup: protoc $(protoc --version | cut -d' ' -f2), python protobuf $(python3 -c 'import google.protobuf as p; print(p.__version__)')"
