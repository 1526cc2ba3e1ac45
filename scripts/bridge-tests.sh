#!/usr/bin/env bash
# The string bridge (libswitchboard_bridge, Sources/SwitchboardBridge/include/switchboard.h)
# driven as foreign cores drive it, each against its own `switchboard mock-server`:
#   1. a C program compiled with the system C compiler, run under valgrind: every string
#      the library returns is freed (no definite leak, no invalid access); and the same
#      program leaking one answer on purpose must fail that check;
#   2. a Python ctypes script.
# Both make calls, check the typed answer documents and errors, take the scripted pushes in
# order (each acknowledged when taken), and call from several threads at once: 200 calls,
# which Tests/Bridge/responses.json answers with 200 distinct scripted profiles (n0 to n199),
# each to reach exactly one call, in each thread's order.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/common.sh

swift build "${SWIFT_BUILD_FLAGS[@]}" --product switchboard_bridge >/dev/null
bin_dir=$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)
bin=$(switchboard_bin)
library="$bin_dir/libswitchboard_bridge.so"
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
failures=0

# Starts a mock server on a free port with the bridge fixtures; sets $url and $server_pid.
start_server() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  : >"$work/server.log"
  "$bin" mock-server --schema schema --port 0 --responses Tests/Bridge/responses.json --pushes Tests/Bridge/pushes.json \
    --require-credentials --credentials ada.1:secret >"$work/server.log" 2>&1 &
  server_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url=$(grep -oE "ws://127\.0\.0\.1:[0-9]+[^ ]*" "$work/server.log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "  FAIL the mock server did not start"; cat "$work/server.log"; exit 1; }
}

# The server's own account of the pushes: all three acknowledged, once each.
check_acknowledged() {
  for _ in $(seq 1 50); do grep -q "pushed 3 events" "$work/server.log" && break; sleep 0.1; done
  if grep -q "pushed 3 events: 3 acknowledged, 0 not" "$work/server.log"; then
    echo "  ok   the server saw each push acknowledged ($1)"
  else
    echo "  FAIL the server did not see every push acknowledged ($1)"; grep pushed "$work/server.log" || true; failures=$((failures + 1))
  fi
}

echo "string bridge, C ABI:"
# valgrind cannot read the DWARF 5 the Swift toolchain writes: the C client links a copy
# without debug information (symbols stay, so reports still name functions).
mkdir -p "$work/lib"
strip --strip-debug -o "$work/lib/libswitchboard_bridge.so" "$library"
cc -std=c11 -Wall -Wextra -Werror -O1 -g -I Sources/SwitchboardBridge/include Tests/Bridge/bridge_client.c \
  -L "$work/lib" -lswitchboard_bridge -Wl,-rpath,"$work/lib" -lpthread -o "$work/bridge_client"
memcheck=(valgrind -q --suppressions=Tests/Bridge/swift-runtime.supp --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --error-exitcode=99)
start_server
if "${memcheck[@]}" "$work/bridge_client" "$url" "$root/schema" >"$work/c.log" 2>&1; then
  cat "$work/c.log" | grep -E "^  (ok|FAIL)" ; echo "  ok   valgrind: no definite leak and no invalid access"
else
  cat "$work/c.log" | tail -40; echo "  FAIL the C client (exit above)"; failures=$((failures + 1))
fi
check_acknowledged "C"

# The memory check must be able to fail: one answer left unfreed is a definite leak.
start_server
set +e
BRIDGE_LEAK_ONE=1 "${memcheck[@]}" "$work/bridge_client" "$url" "$root/schema" >"$work/leak.log" 2>&1
status=$?
set -e
if [ "$status" -eq 99 ] && grep -q "definitely lost" "$work/leak.log"; then
  echo "  ok   an answer left unfreed is reported as a definite leak"
else
  echo "  FAIL the leak check did not catch an unfreed answer (exit $status)"; tail -20 "$work/leak.log"; failures=$((failures + 1))
fi

echo "string bridge, Python ctypes:"
start_server
if python3 Tests/Bridge/bridge_client.py "$library" "$url" "$root/schema"; then :; else failures=$((failures + 1)); fi
check_acknowledged "Python"

if [ "$failures" -gt 0 ]; then echo "bridge tests: $failures failed"; exit 1; fi
echo "bridge tests: all passed"
