#!/usr/bin/env bash
# Exercises the switchboard executable end to end: exit codes, --check's report of
# stale, missing and extra files, and diagnostics on bad schemas.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source "$root/scripts/common.sh"
bin=$(switchboard_bin)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$((failures + 1)); }
expect_status() { # expected-status description command...
  local expected=$1 description=$2; shift 2
  set +e; "$@" >"$work/out" 2>"$work/err"; local status=$?; set -e
  if [ "$status" -eq "$expected" ]; then pass "$description"; else fail "$description (exit $status, wanted $expected)"; cat "$work/err"; fi
}

echo "cli tests:"
expect_status 0 "--version" "$bin" --version
expect_status 2 "no command is a usage error" "$bin"
expect_status 2 "unknown command is a usage error" "$bin" frobnicate
expect_status 2 "unknown option is a usage error" "$bin" generate schema --output "$work/out1" --bogus 1
expect_status 2 "missing schema directory is a usage error" "$bin" lint "$work/nope"
expect_status 0 "lint accepts the sample schema" "$bin" lint schema

cp -r Sources/SignalChat/Generated "$work/sdk"
expect_status 0 "--check passes on a fresh copy" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
echo "// edited" >> "$work/sdk/ChatMessage.swift"
rm "$work/sdk/Badge.swift"
sed 's/Attachment/Zombie/g' "$work/sdk/Attachment.swift" > "$work/sdk/Zombie.swift"
echo "// hand-written, not generated" > "$work/sdk/HandWritten.swift"
expect_status 1 "--check fails on stale output" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
grep -q "stale: .*ChatMessage.swift" "$work/out" && pass "--check lists the stale file" || fail "--check lists the stale file"
grep -q "missing: .*Badge.swift" "$work/out" && pass "--check lists the missing file" || fail "--check lists the missing file"
grep -q "extra: .*Zombie.swift" "$work/out" && pass "--check lists the extra generated file" || fail "--check lists the extra generated file"
grep -q "HandWritten" "$work/out" && fail "--check ignores hand-written files" || pass "--check ignores hand-written files"
expect_status 0 "generate repairs the output" "$bin" generate schema --output "$work/sdk" --module SignalChat
expect_status 0 "--check passes after generate" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
[ -f "$work/sdk/HandWritten.swift" ] && [ ! -f "$work/sdk/Zombie.swift" ] && pass "generate removes only stale generated files" || fail "generate removes only stale generated files"
diff -r "$work/sdk" Sources/SignalChat/Generated -x HandWritten.swift >/dev/null && pass "regenerated output is byte-identical" || fail "regenerated output is byte-identical"

mkdir -p "$work/bad"
printf 'package demo\nmessage A {\n  1 x: strng\n  1 y: int32\n}\n' > "$work/bad/bad.sb"
expect_status 1 "a bad schema exits 1" "$bin" generate "$work/bad" --output "$work/badout"
grep -q "bad.sb:3:8: error: unknown type 'strng'; did you mean 'string'? \[unknown-type\]" "$work/err" && pass "diagnostics name file, line and column" || fail "diagnostics name file, line and column"
grep -q "duplicate-field-key" "$work/err" && pass "several errors are reported in one run" || fail "several errors are reported in one run"
[ ! -d "$work/badout" ] && pass "nothing is written for a bad schema" || fail "nothing is written for a bad schema"

expect_status 0 "export-proto writes to stdout" "$bin" export-proto schema
grep -q 'message WebSocketMessage {' "$work/out" && pass "export-proto emits messages" || fail "export-proto emits messages"

if [ "$failures" -ne 0 ]; then echo "cli tests: $failures failed"; exit 1; fi
echo "cli tests: all passed"
