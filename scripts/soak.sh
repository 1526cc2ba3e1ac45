#!/usr/bin/env bash
# Soak test (not part of the test command): N chat connections (default 1,000) for M minutes
# (default 10), requests from every client and pushes to every client at once. Each process
# reports its descriptors, threads and resident memory every minute; the run fails (exit 1) if
# any request or push was lost or failed, the client process failed, or descriptors, threads or
# memory grew past SoakTest's tolerances (--descriptor-growth, --thread-growth,
# --memory-growth-percent). The clients run in a second process.
#   scripts/soak.sh [connections] [minutes]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
connections=${1:-1000}
minutes=${2:-10}
# SwiftPM can keep a stale build manifest for the path dependency on this package.
rm -f Benchmarks/.build/release.yaml
swift build -c release --package-path Benchmarks --product SoakTest >/dev/null
timeout $(( minutes * 60 + 600 )) Benchmarks/.build/release/SoakTest "$connections" "$minutes"
