#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this). Safe to run repeatedly.
#   1. install protoc and the Python peers if missing
#   2. build everything, tests included, with warnings as errors
#   3. check the committed SDKs against the schemas (generate --check)
#   4. check the committed wire fixtures against protoc and Python protobuf, and run
#      protobuf's official conformance runner (built from the system library's source)
#   5. exercise the switchboard command line, the string bridge's C ABI from C (under
#      valgrind) and from Python ctypes, and the file-drop transport between two processes
#      whose provider is killed and restarted
#   6. type-check compile-fail snippets (auth split), the guides' code, and the Apple-only
#      TLS stream against stand-ins
#   7. run the Swift test suites
#   8. build the API reference (DocC archives) and check every public symbol is documented
#   9. build and test Examples/RoomsApp, a package that depends on this one by path,
#      through the build plugin and the generate-sdk command plugin
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/common.sh

scripts/setup.sh
swift build "${SWIFT_BUILD_FLAGS[@]}" --build-tests
bin=$(switchboard_bin)
"$bin" generate --well-known-types --output Sources/SwitchboardRuntime/WellKnownTypes/Generated --check
"$bin" generate schema --output Sources/SignalChat/Generated --check
"$bin" generate Tests/Schemas/kitchen_sink --output Tests/KitchenSink/Generated --module KitchenSink --check
"$bin" generate Tests/Schemas/test_messages_proto3 --output Tests/TestMessagesProto3/Generated --module TestMessagesProto3 --check
scripts/make-fixtures.sh --check
scripts/conformance.sh
scripts/cli-tests.sh
scripts/bridge-tests.sh
scripts/file-drop-tests.sh
scripts/compile-tests.sh
# Swift Testing starts every test at once; on a 2-core machine hundreds of tests then
# share two cooperative threads and a server handler can wait longer than a call's
# deadline. Six at a time runs as fast (29 s either way, measured) and keeps each test's
# latency honest.
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-6}" \
    swift test "${SWIFT_BUILD_FLAGS[@]}" --skip-build
scripts/docs.sh
scripts/consumer-tests.sh
