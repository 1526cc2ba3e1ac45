#!/usr/bin/env bash
# Uses Switchboard as an app's package would: Examples/RoomsApp depends on this repository
# by path, has its own schema, and
#   1. builds with the SwitchboardGenerator build plugin (SDK generated at build time) and
#      warnings as errors, printing the build time (clean on a fresh clone);
#   2. runs its tests (at least as many as Tests declares with @Test): typed calls and a push
#      over a loopback ChatServer, and the generated mock;
#   3. checks its committed SDK with `swift package generate-sdk --check` (bare, as this
#      repository's too, and by --target), sees the check fail
#      when a generated file is missing, and sees generate-sdk write it back byte for byte;
#   4. breaks its schema and sees the build fail with the generator's diagnostic.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
app="$root/Examples/RoomsApp"
cd "$app"
source "$root/scripts/common.sh"
work=$(mktemp -d)
schema_file=Sources/RoomsAPI/rooms.sb
cp "$schema_file" "$work/rooms.sb"
# Whatever happens, the app's schema and committed SDK are left as they were.
trap 'cp "$work/rooms.sb" "$schema_file"; git -C "$app" checkout -q -- Sources/Presence/Generated 2>/dev/null || true; rm -rf "$work"' EXIT
failures=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$((failures + 1)); }
flags=("${SWIFT_BUILD_FLAGS[@]}")

echo "consumer package (Examples/RoomsApp):"
start=$(date +%s)
if run_logged "$work/build.log" swift build "${flags[@]}" --build-tests; then
  pass "builds with the build plugin in $(( $(date +%s) - start )) s"
else
  fail "build"; tail -n 40 "$work/build.log"; exit 1
fi
if grep -E "(^|: )warning:" "$work/build.log" | grep -v "^warning: unable to find" >/dev/null; then
  fail "the build prints no warnings"; grep -E "warning:" "$work/build.log" | head
else
  pass "the build prints no warnings"
fi
# Passing is not enough: at least as many tests ran as Tests declares (a run of none, or
# no summary at all, fails).
declared=$({ grep -rhoE '@Test\b' --include='*.swift' Tests || true; } | wc -l | tr -d ' ')
if swift test "${flags[@]}" --skip-build >"$work/test.log" 2>&1; then
  ran=$(grep -oE 'Test run with [0-9]+ tests?' "$work/test.log" | head -1 | grep -oE '[0-9]+' || true)
  if [ "$declared" -gt 0 ] && [ -n "$ran" ] && [ "$ran" -ge "$declared" ]; then
    pass "its tests pass ($ran tests run, $declared declared)"
  else
    fail "its tests ran in full: ${ran:-no summary, so unknown} run, $declared declared with @Test in Tests"; tail -n 20 "$work/test.log"
  fi
else
  fail "its tests"; grep -E "✘|error" "$work/test.log" | head -20
fi

# Bare, generate-sdk takes only targets whose configuration names an output: here Presence,
# never RoomsAPI (its *.sb files are the build plugin's), and in this repository SignalChat.
if run_logged "$work/bare.log" swift package --allow-writing-to-package-directory generate-sdk --check \
   && grep -q "Sources/Presence/Generated are up to date" "$work/bare.log" && ! grep -q "RoomsAPI\|Accounts" "$work/bare.log" \
   && [ ! -e Sources/RoomsAPI/Generated ]; then
  pass "generate-sdk --check, bare, checks the committed SDK only"
else fail "generate-sdk --check, bare"; tail -n 5 "$work/bare.log"; fi
if (cd "$root" && run_logged "$work/repo.log" swift package --allow-writing-to-package-directory generate-sdk --check) \
   && grep -q "Sources/SignalChat/Generated are up to date" "$work/repo.log"; then
  pass "generate-sdk --check, bare, in this repository checks the SignalChat sample"
else fail "generate-sdk --check in this repository"; tail -n 5 "$work/repo.log"; fi
plugin=(swift package --allow-writing-to-package-directory generate-sdk --target Presence)
if run_logged "$work/check.log" "${plugin[@]}" --check; then pass "generate-sdk --check: the committed SDK is up to date"
else fail "generate-sdk --check on the committed SDK"; tail -n 5 "$work/check.log"; fi
rm Sources/Presence/Generated/Status.swift
if run_logged "$work/check.log" "${plugin[@]}" --check; then fail "generate-sdk --check notices a missing file"
elif grep -q "missing: .*Sources/Presence/Generated/Status.swift" "$work/check.log"; then pass "generate-sdk --check fails on a missing file and names it"
else fail "generate-sdk --check names the missing file"; tail -n 5 "$work/check.log"; fi
if run_logged "$work/generate.log" "${plugin[@]}" && git diff --quiet -- Sources/Presence/Generated && [ -f Sources/Presence/Generated/Status.swift ]; then
  pass "generate-sdk writes it back byte for byte"
else fail "generate-sdk writes it back"; tail -n 5 "$work/generate.log"; fi

# A schema error fails the build with the generator's file:line:column diagnostic.
printf '\nmessage Broken {\n  1 x: Missing\n}\n' >> "$schema_file"
line=$(( $(wc -l < "$work/rooms.sb") + 3 ))
if run_logged "$work/broken.log" swift build "${flags[@]}" --target RoomsAPI; then
  fail "a broken schema fails the build"
elif grep -q "rooms.sb:$line:8: error: unknown type 'Missing'" "$work/broken.log"; then
  pass "a broken schema fails the build with its diagnostic (rooms.sb:$line:8)"
else
  fail "the build shows the schema's diagnostic"; grep -E "error" "$work/broken.log" | head
fi
cp "$work/rooms.sb" "$schema_file"

if [ "$failures" -gt 0 ]; then echo "consumer tests: $failures failed"; exit 1; fi
echo "consumer tests: all passed"
