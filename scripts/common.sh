# Shared by the scripts: one set of build flags, so every step reuses one build.
# -warnings-as-errors holds the runtime, the generator and the generated SDKs to
# "compiles warning-free under Swift 6".
SWIFT_BUILD_FLAGS=(-Xswiftc -warnings-as-errors)
switchboard_bin() {
  # `|| return`: inside `$(...)` bash ignores `set -e`, so a failed build would otherwise
  # still print the path of whatever stale binary is there.
  swift build "${SWIFT_BUILD_FLAGS[@]}" --product switchboard >/dev/null || return 1
  echo "$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/switchboard"
}

# run_logged LOG COMMAND...: runs a SwiftPM command with its output in LOG. SwiftPM itself
# (swift-package, swift-build; not our code, which runs in child processes whose failures
# come back as exit 1) now and then dies by a signal on Linux (seen once in CI: a
# segmentation fault in `swift package generate-sdk`, swiftlang/swift#87033's kind). Such a
# crash is retried once, and said so on stderr with the crashed thread's frames; any other
# exit status, success or failure, is returned as it is.
run_logged() {
  local log=$1 status=0
  shift
  "$@" >"$log" 2>&1 || status=$?
  # Crash signals only (SIGILL 4, SIGTRAP 5, SIGABRT 6, SIGBUS 7, SIGSEGV 11): an interrupt,
  # a kill or an exit status of its own is reported as it is.
  if [[ "$status" =~ ^(132|133|134|135|139)$ ]]; then
    echo "  note: '$*' died by signal $((status - 128)) inside SwiftPM; running it once more. Its crash:" >&2
    { grep -A 12 "crashed" "$log" || tail -n 12 "$log"; } | sed 's/^/    /' >&2
    status=0
    "$@" >"$log" 2>&1 || status=$?
  fi
  return "$status"
}
