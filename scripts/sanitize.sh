#!/usr/bin/env bash
# Runs the concurrent suites under ThreadSanitizer and the codec and runtime suites under
# AddressSanitizer, each in a build folder of its own (.build-tsan, .build-asan). Not part
# of scripts/test.sh: the two sanitized builds take several minutes each (docs/testing.md
# records a run's times). Any report fails the script.
#   scripts/sanitize.sh [thread|address]   (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh >/dev/null
which=${1:-both}
status=0

run() { # sanitizer scratch filter
  local sanitizer=$1 scratch=$2 filter=$3 log
  log=$(mktemp)
  local started=$SECONDS
  # Under TSan the locks are ones it can follow (see AdaptiveLock): the standard library's
  # Mutex hands a contended lock over in the kernel, which TSan reports as a race.
  local flags=() width=()
  # Two tests at a time under TSan: its slowdown with the default width on two cores starved
  # calls past their 30 s deadlines (2026-11-30), which is load, not a finding.
  if [ "$sanitizer" = thread ]; then flags=(-Xswiftc -DSWITCHBOARD_TSAN); width=(SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=2); fi
  echo "== $sanitizer: building in $scratch" >&2
  swift build --scratch-path "$scratch" --sanitize="$sanitizer" ${flags[@]+"${flags[@]}"} --build-tests >/dev/null
  echo "== $sanitizer: testing $filter" >&2
  # halt_on_error keeps the first report as the failure; a report anywhere fails the run.
  set +e
  env ${width[@]+"${width[@]}"} \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=0 halt_on_error=1" \
    swift test --scratch-path "$scratch" --sanitize="$sanitizer" ${flags[@]+"${flags[@]}"} --skip-build --filter "$filter" >"$log" 2>&1
  local result=$?
  set -e
  grep -E "Test run with|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY" "$log" | head -20 || true
  if [ $result -ne 0 ] || grep -q -E "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$log"; then
    echo "== $sanitizer: FAILED (full log: $log)"
    status=1
  else
    echo "== $sanitizer: clean in $((SECONDS - started)) s"
    rm -f "$log"
  fi
}

if [ "$which" = both ] || [ "$which" = thread ]; then
  run thread .build-tsan "SwitchboardIOTests|SwitchboardChatTests|SwitchboardSessionTests|SwitchboardWebSocketTests"
  # A run of its own: together, TSan's slowdown on two cores pushes timing tests past their bounds.
  run thread .build-tsan "SwitchboardHTTP2Tests|SwitchboardGRPCTests"
fi
if [ "$which" = both ] || [ "$which" = address ]; then
  run address .build-asan "SwitchboardRuntimeTests|SignalChatTests|SwitchboardSchemaTests|SwitchboardEmitterTests|SwitchboardHTTPSyntaxTests"
fi
exit $status
