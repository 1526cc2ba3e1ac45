#!/usr/bin/env bash
# Fuzzes what reads untrusted bytes, with libFuzzer and AddressSanitizer.
#   scripts/fuzz.sh <target> [seconds]   (default 600)
# Targets: websocket (the frame engine and handshake parsers), binary and json (the generated
# codecs of the kitchen-sink schema), dynamic (the schema-at-run-time codecs), schema (the
# schema front end and emitters), envelope (the chat envelope reader against the generated
# decoder), hpack and http2 (the HTTP/2 header decoder and connection core), catalogue (the
# service catalogue's YAML reader); see Fuzz/*.swift
# for each one's oracle. Findings land in .build-fuzz/findings-<target>,
# the corpus grows in .build-fuzz/corpus-<target>. Not part of the test command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: scripts/fuzz.sh websocket|binary|json|dynamic|schema|envelope|hpack|http2|catalogue [seconds]}
seconds=${2:-600}
out="$root/.build-fuzz"
mkdir -p "$out/corpus-$target" "$out/findings-$target"

# Copies of the given sources into $1 without their imports of our own modules, which are
# compiled into the same fuzz module.
copy_without_own_imports() {
  local into=$1
  shift
  rm -rf "$into"
  mkdir -p "$into"
  local index=0
  for file in "$@"; do
    index=$((index + 1))
    sed -E '/^(@testable |internal |package )?import (Switchboard|SignalChat|KitchenSink)/d' "$file" > "$into/$index-$(basename "$file")"
  done
}

if [ "$target" = hpack ] || [ "$target" = http2 ]; then
  binary="$out/fuzz-http2"
  # The sans-IO parts only: HPACK, frames and the connection core, with the field syntax.
  copy_without_own_imports "$out/http2-sources" "$root"/Sources/SwitchboardHTTP2/HPACK/*.swift "$root"/Sources/SwitchboardHTTP2/Frames/*.swift \
    "$root"/Sources/SwitchboardHTTP2/Connection/*.swift "$root"/Sources/SwitchboardHTTP2/Support/*.swift \
    "$root"/Sources/SwitchboardHTTPSyntax/*.swift "$root/Fuzz/FuzzHTTP2.swift"
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzHTTP2 -package-name Switchboard \
    "$out"/http2-sources/*.swift -o "$binary"
elif [ "$target" = catalogue ]; then
  binary="$out/fuzz-catalogue"
  cp -n "$root"/Tests/Bridge/*.json "$out/corpus-$target/" 2>/dev/null || true
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzCatalogue \
    "$root"/Sources/SwitchboardCatalogue/Catalogue/CatalogueYAML.swift "$root"/Sources/SwitchboardCatalogue/Catalogue/CatalogueValue.swift \
    "$root"/Sources/SwitchboardCatalogue/Catalogue/CatalogueError.swift "$root/Fuzz/FuzzCatalogue.swift" -o "$binary"
elif [ "$target" = websocket ]; then
  binary="$out/fuzz-websocket"
  cp -n "$root"/Fuzz/corpus/* "$out/corpus-$target/" 2>/dev/null || true
  copy_without_own_imports "$out/websocket-sources" "$root"/Sources/SwitchboardWebSocket/Core/*.swift \
    "$root"/Sources/SwitchboardHTTPSyntax/*.swift "$root"/Sources/SwitchboardIO/UnfilledByteArray.swift "$root/Fuzz/FuzzWebSocket.swift"
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzWebSocket -package-name Switchboard \
    "$out"/websocket-sources/*.swift -o "$binary"
else
  binary="$out/fuzz-codecs"
  # One module of the runtime, the two generated SDKs, the schema front end, the emitters,
  # the dynamic codecs and the envelope reader: their imports of each other are dropped.
  sources="$out/codec-sources"
  # shellcheck disable=SC2046 # file names hold no spaces
  copy_without_own_imports "$sources" $(find "$root/Sources/SwitchboardRuntime" "$root/Sources/SwitchboardHTTPSyntax" "$root/Tests/KitchenSink/Generated" \
      "$root/Sources/SignalChat/Generated" "$root/Sources/SwitchboardThreads" "$root/Generator/SwitchboardSchema" "$root/Generator/SwitchboardEmitter" "$root/Generator/SwitchboardDynamic" -name '*.swift') \
      "$root/Sources/SwitchboardChat/IncomingEnvelope.swift" "$root/Sources/SwitchboardChat/EnvelopeHeaders.swift" "$root/Fuzz/FuzzCodecs.swift"
  # Rebuilt only when the sources changed (the copies are new each time, so compare contents).
  sum=$(cat "$sources"/*.swift | sha256sum | cut -d' ' -f1)
  if [ ! -x "$binary" ] || [ "$(cat "$binary.sources" 2>/dev/null)" != "$sum" ]; then
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzCodecs -package-name Switchboard "$sources"/*.swift -o "$binary"
    echo "$sum" > "$binary.sources"
  fi
  # Seeds: the committed protoc fixtures and the schemas.
  find "$root/Tests/SwitchboardRuntimeTests/Fixtures" -type f -size -64k -exec cp -n {} "$out/corpus-$target/" \; 2>/dev/null || true
  [ "$target" = schema ] && cp -n "$root"/schema/*.sb "$root"/Tests/Schemas/kitchen_sink/*.sb "$out/corpus-$target/" 2>/dev/null || true
fi
cd "$root"
# The Swift runtime's own crash backtracer would wait on a finding; libFuzzer reports it.
SWIFT_BACKTRACE=enable=no SWITCHBOARD_FUZZ_TARGET=$target SWITCHBOARD_FUZZ_SCHEMA="$root/Tests/Schemas/kitchen_sink" \
  "$binary" "$out/corpus-$target" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$out/findings-$target/" -print_final_stats=1 2>&1 | tail -25
