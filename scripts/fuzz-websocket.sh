#!/usr/bin/env bash
# Fuzzes the WebSocket sans-IO core (frame engine, HTTP head and handshake parsers) with
# libFuzzer and AddressSanitizer. usage: scripts/fuzz-websocket.sh [seconds]  (default 600)
# Findings (crashes, hangs) land in .build-fuzz/findings; the corpus grows in .build-fuzz/corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
out="$root/.build-fuzz"
mkdir -p "$out/corpus" "$out/findings"
cp -n "$root"/Fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzWebSocket \
  "$root"/Sources/SwitchboardWebSocket/Core/*.swift "$root/Fuzz/FuzzWebSocket.swift" \
  -o "$out/fuzz-websocket"
cd "$out"
./fuzz-websocket corpus -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix=findings/ -print_final_stats=1 2>&1 | tail -25
