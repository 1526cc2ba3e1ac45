#!/usr/bin/env bash
# Regenerates Sources/SignalChatPeerMessages: swift-protobuf's messages for the sample schema
# (switchboard export-proto, then protoc-gen-swift), which the codec and gRPC benchmarks
# measure against. Run after the schema changes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build --product switchboard >/dev/null
swift build -c release --package-path Benchmarks --product protoc-gen-swift >/dev/null
"$(swift build --show-bin-path)/switchboard" export-proto schema --output "$work/signal_chat.proto" 2>/dev/null
protoc --plugin=protoc-gen-swift=Benchmarks/.build/release/protoc-gen-swift --swift_out=Visibility=Public:"$work" \
  -I "$work" -I /usr/include signal_chat.proto
cp "$work/signal_chat.pb.swift" Benchmarks/Sources/SignalChatPeerMessages/signal_chat.pb.swift
echo "wrote Benchmarks/Sources/SignalChatPeerMessages/signal_chat.pb.swift"
