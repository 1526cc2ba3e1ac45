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
# Fails the script when a decoder of ours needs a second or more for 1 MiB of repeated merges.
timeout $limit "$bench" --merges schema > "$work/merges.md"
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
faster than Foundation. The \`ChatMessage\` figures clear them in every run. The envelope's binary
figures sit at the line: 2.0–2.1× when they were accepted, 1.7–2.1× over later runs on both
hosts (see "Two hosts" below; encode 1.7–2.0×, decode 1.8–2.1×). About a sixth of an envelope
encode's samples are two costs of the Swift runtime that both codecs pay (see the end of the chat
section).

## Hostile input: repeated merges

Protobuf merges a singular message field that appears more than once, so 1 MiB can hold about
150,000 occurrences that each extend what the ones before built (here \`RoomEvent.message\`, each
occurrence adding an attachment). A decoder that copied the value merged so far at each
occurrence is quadratic; ours are held to under one second at 1 MiB (the script fails
otherwise), and \`LinearDecodingTests\` bounds the same work by counting allocated bytes,
independent of time. One decode each, same input; swift-protobuf's time grows with the square of
the input, so it is not run at 1 MiB:

$(cat "$work/merges.md")

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
Seven alternating rounds; each contender's median round (latency) and median rate are shown.

$(cat "$work/websocket.md")

Goals: a median round trip within 1.5× of raw TCP, and throughput at least equal to the swift-nio
peer. Our server echoes on the socket's reader thread (direct delivery), as the swift-nio server
echoes on its event loop. Our client is measured twice: with its task on the global pool (the
default), and pinned to the connection's event loop (\`withTaskExecutorPreference(connection.eventLoop)\`),
where an answer resumes the waiting task on the thread that read it, as a task on a swift-nio
event loop would. The reader waits in a plain blocking read, so a pinned round trip makes the
same system calls and thread wake-ups as the raw echo; what remains is framing, masking and the
resumption. On the global pool each message costs one more wake-up (reader thread to pool thread).

Two hosts. This project's machine has been two different hosts, and a ratio to raw TCP depends
on how the host splits a round trip's cost between the kernel (system calls, thread wake-ups) and
user code. Up to 2026-11-23 the host had cheap wake-ups and slow user code: a raw round trip took
24–30 µs and our codecs 4–5× longer than in the table above. There the pinned client was
1.27–1.63× raw TCP (goal met) and the default client 2.05–2.5× (goal missed: the answer wakes a
pool thread, which cost about as much as a raw round trip), and our server's throughput was
0.95–1.62× the swift-nio server's. Since 2026-11-24 the host has costly wake-ups and fast user
code: a raw round trip takes 47–53 µs, nearly all of it in the kernel, and the same code's share
shrinks. In this session's four runs the pinned client was 1.02–1.12× raw TCP, the default
client 0.78–0.88× (a pool thread that is still awake takes the answer sooner than a blocked one
is woken), and our server's throughput 1.08–1.29× the swift-nio server's: every goal is met.
The chat section's CPU table shows the split directly. When the scheduler puts both ends of an
echo on one core, a round trip roughly halves; the median of seven rounds keeps such a round
from setting the floor.

## Chat RPC

Typed calls end to end on loopback: the generated \`MessagesClient.sendMessage\` encodes a
\`SendMessageRequest\` (a 160-byte ciphertext), the chat connection wraps it in the
\`WebSocketMessage\` envelope and sends it over our WebSocket, \`ChatServer\` routes it to a
generated handler, and the \`SendMessageResponse\` comes back decoded. The floor is a raw TCP
echo of frames the same size, with the same number of connections and requests in flight,
measured in the same run (five alternating rounds; each contender's median round is shown).

$(cat "$work/chat.md")

Goal: a typed request and response within 2× of a raw-TCP round trip. The caller is measured on
the global pool and pinned to the connection's event loop (as above); \`ChatServer\` starts each
handler on its connection's reader thread.

The CPU table adds up the user and system time the process (client and server together) spends
per serial round trip, measured with \`getrusage\` over 5,000 calls. It is less noisy than
latency, and it shows what the typed call adds: 3–7 µs of user time for a pinned caller and 6–15 µs
on the global pool, against the raw echo's 2–6 µs, with the same system time (two sends and two
receives per round trip, as \`strace -c\` showed).

On this host (since 2026-11-24) the goal is met, for both callers, one call at a time and with
64 in flight. One at a time, the median was 0.96–1.13× raw TCP on the global pool and 0.98–1.07×
pinned (0.36× in a run whose pinned rounds had both ends on one core); with 64 in flight,
1.24–1.50× on the global pool and 0.86–0.99× pinned. With 100 connections and 200 reader threads
in one process on two cores, the pinned caller was 1.53–2.01× and the global pool 2.05–3.0×
(over the goal): there each answer also waits for a core, and the pool adds its own wake-up per
call.

On the earlier host (to 2026-11-23) the same code measured 1.9–2.2× pinned one at a time (44–62 µs
against floors of 24–30 µs; 1.8× in the quickest run), 3.1–3.7× on the global pool, and
1.37–1.43× pinned with 64 in flight: user code there cost 26–36 µs per call, both sides
together, against this host's 8–18 µs. The goal held with 64 in flight and was at the line one
at a time. Pinning (\`withTaskExecutorPreference(connection.eventLoop)\`) removes the pool's
wake-up on any host.

What made a typed call cheaper, measured on the earlier host with CPU time per call
(\`/usr/bin/time\` over \`ChatBenchmarks --profile 20000\`) and a malloc uprobe
(\`perf probe -x libc.so.6 malloc\`): user CPU per call fell from about 49 µs to 26–36 µs and
allocations per call from 54 to 25.3, both sides together.
- Envelopes skip the generated \`WebSocketMessage\`: \`OutgoingEnvelope\` sizes a request or
  response and writes it straight into the WebSocket frame, and \`IncomingEnvelope\` reads a
  frame's envelope straight into \`RPCHeaders\`. Tests hold both to the generated code's bytes
  and decoding on random and damaged input.
- \`RPCCall.perform\`, \`interpret\` and the body helpers are inlinable, so each endpoint gets a
  specialized copy instead of generic-metadata lookups on every call.
- Server handlers start as immediate tasks on the reader thread (\`Task.immediate\` with the
  connection's event loop as executor preference): no scheduling round for a handler that
  does not suspend.
- Reads go into one buffer kept for the connection's life and messages reach the chat layer as
  slices of it; pending requests keep their deadline in their entry; long well-known header
  values are shared; a request is written before its cancellation handler and deadline watch
  are installed, so that work overlaps the server's.

What is left is spread thin: no user-space symbol is above 3% of samples. Each \`[UInt8]\`
allocated in client code looks up \`_ContiguousArrayStorage<UInt8>\`'s prespecialized metadata in a
runtime hash table, and \`Data\` bodies pay dynamic exclusivity checks in Foundation's inlined
code; both are in the Swift runtime and libraries, and swift-protobuf's code pays them too.

## Reproduce

\`\`\`sh
scripts/benchmark.sh
\`\`\`
MD
} > docs/performance.md
cat docs/performance.md
