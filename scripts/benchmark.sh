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
echo "measuring typed calls over gRPC against the WebSocket path..." >&2
timeout $limit swift build -c release --package-path Benchmarks --product GRPCBenchmarks >/dev/null
timeout $limit Benchmarks/.build/release/GRPCBenchmarks > "$work/grpc.md"
echo "measuring 10,000 idle connections..." >&2
timeout $limit swift build -c release --package-path Benchmarks --product IdleConnectionsBenchmark >/dev/null
timeout $limit Benchmarks/.build/release/IdleConnectionsBenchmark 10000 > "$work/idle.md"

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
# Generation from outside, as a user runs it: the release CLI on the rich 1,000-message schema,
# into a new folder (issue 20's goal: under 0.5 s), median of 5.
swift build -c release --product switchboard >/dev/null
mkdir -p "$work/rich"
"$bench" --synthetic-schema "$work/rich/synthetic.sb" 1000 --rich
cli_seconds=$(for i in 1 2 3 4 5; do
  start=$(date +%s.%N); "$(swift build -c release --show-bin-path)/switchboard" generate "$work/rich" --output "$work/rich-out-$i" >/dev/null 2>&1; end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
done | sort -n | sed -n 3p)
# The same with the debug CLI, which `swift run switchboard` (the README's command) builds.
swift build --product switchboard >/dev/null
cli_debug_seconds=$(for i in 1 2 3 4 5; do
  start=$(date +%s.%N); "$(swift build --show-bin-path)/switchboard" generate "$work/rich" --output "$work/rich-debug-out-$i" >/dev/null 2>&1; end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
done | sort -n | sed -n 3p)
# Issue 20's goal is a limit, not a figure to admire: the script fails (after writing the
# report) when the median reaches it.
generation_over_goal=$(python3 -c "print(1 if $cli_seconds >= 0.5 else 0)")

# Time only the generated module: build its runtime dependency first.
# Prints "<wall seconds> <CPU seconds>" (CPU: user + system of every compiler process).
time_build() { # package-dir runtime-target
  timeout $limit swift build --package-path "$1" --target "$2" >/dev/null 2>&1
  touch "$1"/Sources/Synthetic/*.swift
  /usr/bin/time -f "%e %U %S" -o "$work/time.txt" timeout $limit swift build --package-path "$1" --target Synthetic >/dev/null 2>&1 || { echo "timeout timeout"; return; }
  python3 -c "w, u, s = map(float, open('$work/time.txt').read().split()[-3:]); print(f'{w:.1f} {u + s:.1f}')"
}
# The machine is shared: the two builds alternate for three rounds, medians kept.
ours_runs=(); peer_runs=()
for round in 1 2 3; do
  ours_runs+=("$(time_build "$work/ours" SwitchboardRuntime)")
  peer_runs+=("$(time_build "$work/peer" SwiftProtobuf)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ours_seconds=$(median "${ours_runs[@]%% *}"); ours_cpu=$(median "${ours_runs[@]##* }")
peer_seconds=$(median "${peer_runs[@]%% *}"); peer_cpu=$(median "${peer_runs[@]##* }")
cpu_ratio=$(python3 -c "print(f'{$ours_cpu / $peer_cpu:.2f}')")
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
| \`switchboard generate\` (release) of 1,000 rich messages and 100 endpoints into a new folder, median of 5 | ${cli_seconds} s | |
| The same with the debug build (what \`swift run switchboard\` runs), median of 5 | ${cli_debug_seconds} s | |
| Debug build of the generated module for a synthetic 200-message schema (runtime prebuilt), wall | ${ours_seconds} s ($ours_files files, $ours_lines lines) | swift-protobuf: ${peer_seconds} s (1 file, $peer_lines lines) |
| The same build's CPU time (user + system), median of 3 alternating rounds | ${ours_cpu} s (${cpu_ratio}× swift-protobuf's) | swift-protobuf: ${peer_cpu} s |

Goal for generation: under 0.5 s for 1,000 rich messages from outside (issue 20). Files are
translated, rendered and written on every core, written with plain system calls (Foundation's
\`Data.write\` synced each file to disk), and tags are formatted by hand (\`String(format:)\` was a
seventh of the time). Messages embedded inline beyond an
estimated 256 bytes are boxed, which keeps deep embedding chains (as in the synthetic
schema, where each message holds the previous one) from inflating structs and compile time.

Goal for the module build (issue 20): at most 0.6× swift-protobuf's CPU time. Generated size
passes add through \`WireSizeSum\` methods and nested messages are written by
\`WireWriter.writeLengthDelimited\`, never with \`+=\` or \`UInt64(_:)\`, whose overloads the type
checker weighs at every use (a quarter of the CPU time when measured on 2026-11-28).

### A consumer package, built from clean

\`Examples/RoomsApp\` (three schema files through the build plugin, one schema folder through
it by configuration, a committed SDK, and a test target using \`SwitchboardChat\`),
\`rm -rf .build && swift build --build-tests\`, debug, on this 2-core machine, 2026-11-26:

| Measure | Value |
|---|---:|
| Wall time | 29.1 s (38 s user, 6 s system) |
| Compile steps (\`Compiling\` lines) | 126: \`SwitchboardRuntime\` 41, \`SwitchboardWebSocket\` 21, \`SwitchboardChat\` 14, the plugins' \`switchboard-generate\` (schema, emitter, CLI core) 34, the app's own 14, the OpenSSL shim 1 |
| Steps for the \`SignalChat\` sample | 0 (before issue 18, 45 of 127 steps in a small app) |
| Before the plugins ran \`switchboard-generate\` | 43.6 s: the tool was the whole CLI, so the runtime, WebSocket, chat and OpenSSL code compiled a second time for the host |

No peer is measured here: the figure is for a newcomer's first build.
\`scripts/consumer-tests.sh\` prints its build time on every run, which is a clean build only
on a fresh clone (as in CI).

## WebSocket transport

Loopback, 400-byte binary messages: serial round trips (median and p99 of 3,000) and throughput
with 64 messages in flight. The floor is a raw TCP echo (a blocking client and a thread-per-
connection server); the peer is a swift-nio 2.101 \`NIOWebSocket\` echo server, driven by our client.
Seven alternating rounds; each contender's median round (latency) and median rate are shown.

$(cat "$work/websocket.md")

Goals: a median round trip within 1.5× of raw TCP, and throughput at least equal to the swift-nio
peer. Since issue 22 both our client and our server run on the process's event loops (two here,
one per core), and our server echoes on its loop (direct delivery), as the swift-nio server
echoes on its own. Our client is measured twice: with its task on the global pool (the default),
and pinned to the connection's event loop (\`withTaskExecutorPreference(connection.eventLoop)\`),
where an answer resumes the waiting task on the thread that read it. \`strace -c\` counts two
\`sendto\`, two \`recvfrom\` and two \`epoll_wait\` per pinned round trip, and no eventfd wakeup
(there was one per message until a loop stopped waking itself for work queued from its own
thread).

Hosts. This project's machine has been several hosts, and a ratio to raw TCP depends on how the
host splits a round trip's cost between the kernel (system calls, wake-ups) and user code. To
2026-11-23 a raw round trip took 24–30 µs with slow user code; from 2026-11-24 it took 47–53 µs
with fast user code (the pinned client was 1.02–1.12× raw TCP there, on a reader thread per
connection). On 2026-11-26 the raw echo takes 57–85 µs from run to run and user code runs cold
between wake-ups: a typed call's user CPU is 28 µs per round trip on the thread-per-connection
design and about the same on event loops (measured side by side from two builds, same run).

## Chat RPC

Typed calls end to end on loopback: the generated \`MessagesClient.sendMessage\` encodes a
\`SendMessageRequest\` (a 160-byte ciphertext), the chat connection wraps it in the
\`WebSocketMessage\` envelope and sends it over our WebSocket, \`ChatServer\` routes it to a
generated handler, and the \`SendMessageResponse\` comes back decoded. The floors are raw TCP
echoes of frames the same size, with the same number of connections and requests in flight:
a thread-per-connection echo and a one-thread epoll echo (the event-loop floor); the ratio is
to the faster of the two in the same run (five alternating rounds; each contender's median
round is shown). Each round is a closed loop over a fixed window: every caller starts at one
instant, calls for 0.1 s unmeasured and 0.5 s measured, so the number in flight is the same all
through the measurement. (Until 2026-11-28 each caller made a fixed number of calls. The raw
echo's 100 threads then started and finished at different times: its mean latency showed
about 47 calls in flight, not 100, which made its floor look twice as fast as it is.)

$(cat "$work/chat.md")

Goals (issue 22): typed call ≤ 1.2× raw TCP with one connection and with 64 in flight, ≤ 1.5×
with 100 connections, and CPU per round trip ≤ 2× raw's. Four windowed runs on 2026-11-28
(pinned caller, median latency against the faster echo):
- One connection: 1.47–1.48× (one run 3.3×, a noisy round). Not met. A round trip is two
  wake-ups of sleeping threads with the same system calls as the echo; what runs between them
  runs with cold caches: 40–70 µs of user CPU per round trip against the echo's 5–13 µs, for
  work that takes 5 µs warm (the layer table). Less code per call would move it; the I/O
  model would not.
- 64 in flight: 1.28–1.39×. Not met on this host (an earlier host, with the fixed-count
  benchmark, gave 1.02×). The global pool is 1.8–2.1×: each answer wakes a pool thread.
- 100 connections: 1.26×, 1.55×, 1.60×, 1.73×. Met in one run of four. Here the machine's two
  cores are saturated, so latency follows CPU per call, and user-space code is half the
  profile, spread thinly over hundreds of functions (retain/release, locks, envelope and frame
  work, task switches).
- CPU per round trip: met, 1.85× raw's (both callers).

The CPU table adds up the user and system time the process (client and server together) spends
per serial round trip, measured with \`getrusage\` over 5,000 calls.

What made a typed call cheaper, measured on an earlier host with CPU time per call
(\`/usr/bin/time\` over \`ChatBenchmarks --profile 20000\`) and a malloc uprobe
(\`perf probe -x libc.so.6 malloc\`): user CPU per call fell from about 49 µs to 26–36 µs and
allocations per call from 54 to 25.3, both sides together.
- Envelopes skip the generated \`WebSocketMessage\`: \`OutgoingEnvelope\` sizes a request or
  response and writes it straight into the WebSocket frame, and \`IncomingEnvelope\` reads a
  frame's envelope straight into \`RPCHeaders\`. Tests hold both to the generated code's bytes
  and decoding on random and damaged input.
- \`RPCCall.perform\`, \`interpret\` and the body helpers are inlinable, so each endpoint gets a
  specialized copy instead of generic-metadata lookups on every call.
- Server handlers start as immediate tasks on the connection's event loop (\`Task.immediate\`
  with it as executor preference): no scheduling round for a handler that does not suspend.
- Messages reach the chat layer as slices of the parser's buffer; pending requests keep their
  deadline in their entry; long well-known header values are shared; a request is written
  before its cancellation handler and deadline watch are installed, so that work overlaps the
  server's.

## gRPC transport

\`GRPCBenchmarks\`: the same \`sendMessage\` in one run over grpc-swift 2 (its client and server on
grpc-swift-nio-transport, h2c, flush coalescing off, swift-protobuf's messages for the same
\`.proto\`), over our gRPC path (\`GRPCClientTransport\` to \`GRPCServer\`, h2c) and over our
WebSocket path (\`ChatConnection\` to \`ChatServer\`) on loopback; twelve rounds, each order of
the three contenders twice, each one's median round, and the gRPC/WebSocket ratio paired round
by round. Each round is a closed-loop window (all callers start together, 0.1 s warm-up, 1 s
measured).

$(cat "$work/grpc.md")

Goals (issue 19): median latency at or below grpc-swift 2's and throughput at least its; our
gRPC path within 1.2x of our WebSocket path. grpc-swift runs untuned, with its defaults.

## Idle connections

\`IdleConnectionsBenchmark\`: a \`WebSocketServer\` on the shared loops in this process, 10,000
clients connected from a second process (each under the 20,000-descriptor limit), then a new
client connects, sends one message, gets the echo and closes, 21 times. Goal (issue 22): the
server holds them with the event-loop threads plus a small constant, and answers a new client
within 10 ms.

$(cat "$work/idle.md")

Before issue 22 each connection had a reader thread: 10,000 connections were 10,000 threads.
Each connection now holds no read buffer of its own (the loop's 64 KiB one is shared), which
keeps resident memory near 7 KiB per idle connection.

## Soak

\`scripts/soak.sh\` (not part of the test command): 1,000 chat connections for 10 minutes, each
client calling \`sendMessage\` about once a second and the server pushing to every client every
five seconds, both at once, clients in a second process. Descriptors, threads and resident
memory every minute, per process; at the end every request must have its response and every
acknowledged push its handling.

The runs and their figures are in [testing.md](testing.md#soak).

## Reproduce

\`\`\`sh
scripts/benchmark.sh        # codecs, merges, build times, WebSocket, chat, idle connections
scripts/soak.sh 1000 10     # the soak: 1,000 connections for 10 minutes
\`\`\`
MD
} > docs/performance.md
cat docs/performance.md
if [ "$generation_over_goal" = 1 ]; then
  echo "generation of 1,000 rich messages took ${cli_seconds} s, over the 0.5 s goal" >&2
  exit 1
fi
