#!/usr/bin/env bash
# Measures codec speed against swift-protobuf 1.39.0 and Foundation's JSON coders,
# generation speed, and the debug build time of a 200-message SDK (against
# protoc-gen-swift's code for the same schema), then rewrites docs/performance.md.
# Benchmarks are not tests: run this by hand. Every step has a time limit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
limit=1200

echo "building the benchmark package and protoc-gen-swift (release)..." >&2
# SwiftPM can keep a stale build manifest for the path dependency on this package, missing
# files added since; dropping the manifest makes it plan again without rebuilding everything.
rm -f Benchmarks/.build/release.yaml
timeout $limit swift build -c release --package-path Benchmarks >/dev/null
timeout $limit swift build -c release --package-path Benchmarks --product protoc-gen-swift >/dev/null
bench=Benchmarks/.build/release/CodecBenchmarks
plugin=Benchmarks/.build/release/protoc-gen-swift
timeout $limit "$bench" > "$work/codec.md"
echo "measuring WebSocket round trips and throughput on loopback..." >&2
timeout $limit swift build -c release --package-path Benchmarks --product WebSocketBenchmarks >/dev/null
timeout $limit Benchmarks/.build/release/WebSocketBenchmarks > "$work/websocket.md"
echo "measuring typed chat calls against raw TCP on loopback..." >&2
timeout $limit swift build -c release --package-path Benchmarks --product ChatBenchmarks >/dev/null
timeout $limit Benchmarks/.build/release/ChatBenchmarks > "$work/chat.md"

echo "measuring debug builds of a 200-message schema..." >&2
swift build --product switchboard >/dev/null
switchboard="$(swift build --show-bin-path)/switchboard"
mkdir -p "$work/schema" "$work/ours/Sources/Synthetic" "$work/peer/Sources/Synthetic"
"$bench" --synthetic-schema "$work/schema/synthetic.sb" 200
"$switchboard" generate "$work/schema" --output "$work/ours/Sources/Synthetic" --module Synthetic 2>/dev/null
"$switchboard" export-proto "$work/schema" --output "$work/synthetic.proto" 2>/dev/null
protoc --plugin=protoc-gen-swift="$plugin" --swift_out=Visibility=Public:"$work/peer/Sources/Synthetic" \
  -I "$work" -I /usr/include synthetic.proto
cat > "$work/ours/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "Synthetic",
    dependencies: [.package(name: "Switchboard", path: "$root")],
    targets: [.target(name: "Synthetic", dependencies: [.product(name: "SwitchboardRuntime", package: "Switchboard")])]
)
SWIFT
cat > "$work/peer/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "Synthetic",
    dependencies: [.package(path: "$root/Benchmarks/.build/checkouts/swift-protobuf")],
    targets: [.target(name: "Synthetic", dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")])]
)
SWIFT
# Time only the generated module: build its runtime dependency first.
time_build() { # package-dir runtime-target
  timeout $limit swift build --package-path "$1" --target "$2" >/dev/null 2>&1
  local start end
  start=$(date +%s.%N)
  timeout $limit swift build --package-path "$1" --target Synthetic >/dev/null 2>&1 || { echo "timeout"; return; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}
ours_seconds=$(time_build "$work/ours" SwitchboardRuntime)
peer_seconds=$(time_build "$work/peer" SwiftProtobuf)
ours_lines=$(cat "$work/ours/Sources/Synthetic"/*.swift | wc -l)
peer_lines=$(cat "$work/peer/Sources/Synthetic"/*.swift | wc -l)
ours_files=$(ls "$work/ours/Sources/Synthetic" | wc -l)

{
  cat <<MD
# Performance

Measured by \`scripts/benchmark.sh\` on $(date -u +%Y-%m-%d), on this project's shared
$(nproc)-core Linux machine (Swift $(swift --version 2>/dev/null | head -1 | sed 's/.*version \([0-9.]*\).*/\1/'), release builds for codecs).
The machine is shared and noisy, so only ratios between contenders measured in the
same run mean anything: contenders run in alternating rounds and each figure is the
median of 9 rounds. Absolute times vary by ±30% between runs.

Peers: [swift-protobuf](https://github.com/apple/swift-protobuf) 1.39.0 with code from
\`protoc-gen-swift\` for the same \`.proto\` (\`switchboard export-proto\`), and Foundation's
\`JSONEncoder\`/\`JSONDecoder\` on equivalent \`Codable\` structs. Each peer encodes the same
message (checked at start-up).

Workloads (from the issue): the WebSocket envelope, a request with 3 headers and a 256-byte
body; and a \`ChatMessage\` with 2 attachments, 2 extras and non-ASCII text.

## Codecs

"Speed-up" is the peer's time divided by ours.

MD
  sed '/^Generation/d;/^<!--/d;/^$/d' "$work/codec.md"
  cat <<MD

Goals: binary encode and decode at least 2× faster than swift-protobuf; JSON at least 5×
faster than Foundation.

## Generation and compile time

| Measure | Switchboard | Peer |
|---|---:|---:|
| $(grep '^Generation' "$work/codec.md" | sed 's/: \(.*\)$/ | \1 | |/') 
| Debug build of the generated module for a synthetic 200-message schema (runtime prebuilt) | ${ours_seconds} s ($ours_files files, $ours_lines lines) | swift-protobuf: ${peer_seconds} s (1 file, $peer_lines lines) |

Goal for generation: under 1 s for 1,000 messages. Messages embedded inline beyond an
estimated 256 bytes are boxed, which keeps deep embedding chains (as in the synthetic
schema, where each message holds the previous one) from inflating structs and compile time.

## WebSocket transport

Loopback, 400-byte binary messages: serial round trips (median and p99 of 3,000) and throughput
with 64 messages in flight. The floor is a raw TCP echo (a blocking client and a thread-per-
connection server); the peer is a swift-nio 2.101 \`NIOWebSocket\` echo server, driven by our client.

$(cat "$work/websocket.md")

Goals: a median round trip within 1.5× of raw TCP, and throughput at least equal to the swift-nio
peer. Our server echoes on the socket's reader thread (direct delivery), as the swift-nio server
echoes on its event loop. Our client is measured twice: with its task on the global pool (the
default), and pinned to the connection's event loop (\`withTaskExecutorPreference(connection.eventLoop)\`),
where an answer resumes the waiting task on the thread that read it, as a task on a swift-nio
event loop would. The reader waits in a plain blocking read, so a pinned round trip makes the
same system calls and thread wake-ups as the raw echo; what remains is framing, masking and the
resumption. On the global pool each message costs one more wake-up (reader thread to pool thread).

Across runs on 2026-11-22: pinned, the median round trip was 1.27–1.44× raw TCP in quiet runs (goal
met) and 1.39–2.2× in the busy hour of the last run, when the raw floor itself swung between runs and
p99s reached 0.4–1.2 ms; the pinned median itself stayed at 36–45 µs. On the global pool: 2.05–2.5×
(goal not met for the default). Our server's throughput against the swift-nio server's was
1.09–1.62× in quiet runs and 0.95–1.18× in the busy hour of the last run (p99s of 0.4–1.2 ms): at
parity within noise then, so the goal holds in quiet runs and is a tie in busy ones. Before the event
loop, the client was 2.2–2.8×.

## Chat RPC

Typed calls end to end on loopback: the generated \`MessagesClient.sendMessage\` encodes a
\`SendMessageRequest\` (a 160-byte ciphertext), the chat connection wraps it in the
\`WebSocketMessage\` envelope and sends it over our WebSocket, \`ChatServer\` routes it to a
generated handler, and the \`SendMessageResponse\` comes back decoded. The floor is a raw TCP
echo of frames the same size, with the same number of connections and requests in flight,
measured in the same run (best median of three alternating rounds each).

$(cat "$work/chat.md")

Goal: a typed request and response within 2× of a raw-TCP round trip. The caller is measured on
the global pool and pinned to the connection's event loop (as above); \`ChatServer\` runs its
handlers on each connection's event loop.

Not met. Over runs on 2026-11-22 the pinned serial median was 61–88 µs (2.5× raw in the last run) and the default
97–138 µs (2026-11-21: 120–155 µs), against a raw floor of 23–30 µs (2.6–3.4× pinned), or of
11–12 µs in runs where the raw echo's two threads share a core (7×). With 64 in flight the pinned
caller reaches 32–44k requests/s and the default 25–47k (2026-11-21: 16–22k). The second table above
times each layer alone, hot, on one thread: together they come to about 13 µs, and the WebSocket
round trip pinned to about 35–45 µs (above). The rest, 20–35 µs, is the glue between them (pending-
request bookkeeping, continuations, header strings, the hop into each server task) and running
all of it with cold caches once per round trip: a perf profile of the pinned run shows no symbol
above 4%. Reaching 2× needs fewer allocations and hops along the whole path, not one fix. The
changes of 2026-11-22: the event loop (half the thread wake-ups), header trimming without
Foundation (it was about 15% of a call), routing and percent-decoding on contiguous bytes, and a
protocol requirement instead of an existential cast in \`RPCCall\`.

Where the time goes (2026-11-22, \`ChatBenchmarks --profile 20000\` under \`perf stat\`, \`strace -c\` and
\`perf record\`): a pinned serial call makes exactly the raw echo's system calls (two sends, two
receives) and two context switches, and costs about 80 µs of CPU across client and server
together, 55 µs of it in user space: the latency is CPU, not waiting. The user-space part is spread
thin: reference counting and malloc (about 12% of samples), generic-metadata lookups (about 4%),
the concurrency runtime (about 7%), our own code under 1.1% per symbol; the kernel's TCP path is
a third. Header lookups and header lines on ASCII bytes (no \`lowercased()\` copies) were the
last cheap piece; what is left needs a leaner path end to end (fewer objects per call, no task per
server request), which is the open work on this goal.

The same tools on the raw echo (\`ChatBenchmarks --profile-raw 20000\`), 2026-11-22: about 23 µs of CPU
per round trip, nearly all of it in the kernel (2 µs in user space), against about 77 µs for a
pinned typed call (49 µs in user space, 30 µs in the kernel). The two runs' latencies differ by
about the typed call's user-space time, which is therefore the whole gap. A malloc uprobe
(\`perf probe -x libc.so.6 malloc\`) counts 2 allocations per raw round trip and 51 per typed call
on both sides together (54 before the event loop reused its job buffers): read buffers, frame
payloads, \`Data\` for each encoded message and each decoded bytes field, header strings, the
route's parameter dictionary, and the server's task per request.

## Reproduce

\`\`\`sh
scripts/benchmark.sh
\`\`\`
MD
} > docs/performance.md
cat docs/performance.md
