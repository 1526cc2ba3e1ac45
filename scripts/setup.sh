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
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip) # the real peers
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# jtd: the reference RFC 8927 validator; PyYAML: a YAML reader for the exported catalogue.
# Each package at its minimum version: an older one already installed (Debian's websockets
# 10, say) is upgraded, not taken as present.
peers=("protobuf>=4.21" "websockets>=13" "h2>=4.1" "grpcio>=1.60" "grpcio-tools>=1.60" "jtd>=0.1.1" "pyyaml>=6")
have_peers() {
  python3 - "${peers[@]}" <<'PY' 2>/dev/null
import re, sys
from importlib.metadata import version
import google.protobuf, websockets, h2, hpack, hyperframe, grpc, grpc_tools, jtd, yaml
for requirement in sys.argv[1:]:
    name, minimum = requirement.split(">=")
    have = tuple(int(part) for part in re.findall(r"\d+", version(name))[:3])
    need = tuple(int(part) for part in minimum.split("."))
    assert have >= need, f"{name} {version(name)} < {minimum}"
PY
}
if ! have_peers; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip >/dev/null
  fi
  # A Debian system Python refuses pip installs outside a virtual environment (PEP 668);
  # these are test-time peers, so they go in beside the system's own packages.
  python3 -m pip install -q --disable-pip-version-check "${peers[@]}" 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages "${peers[@]}"
  have_peers || { echo "setup: the Python peers are still missing or too old" >&2; exit 1; }
fi
echo "setup: protoc $(protoc --version | cut -d' ' -f2), python protobuf $(python3 -c 'import google.protobuf as p; print(p.__version__)')"
