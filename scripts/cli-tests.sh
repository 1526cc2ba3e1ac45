#!/usr/bin/env bash
# Exercises the switchboard executable end to end: exit codes, --check's report of
# stale, missing and extra files, and diagnostics on bad schemas.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source "$root/scripts/common.sh"
bin=$(switchboard_bin)
work=$(mktemp -d)
mock_pid=""
escape_pid=""
trap '{ [ -n "$mock_pid" ] && kill "$mock_pid"; [ -n "$escape_pid" ] && kill "$escape_pid"; } 2>/dev/null || true; rm -rf "$work"' EXIT
failures=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$((failures + 1)); }
# Waits (60 s at most) for the mock server started last to print $1. One that does not is a
# failure shown with its error output, not a silent end of the script at the next grep.
wait_for_mock() {
  for _ in $(seq 1 600); do grep -q "$1" "$work/mock.out" 2>/dev/null && return 0; sleep 0.1; done
  fail "mock-server printed no '$1' in 60 s: $(head -c 500 "$work/mock.err" 2>/dev/null)"
}
expect_status() { # expected-status description command...
  local expected=$1 description=$2; shift 2
  set +e; "$@" >"$work/out" 2>"$work/err"; local status=$?; set -e
  if [ "$status" -eq "$expected" ]; then pass "$description"; else fail "$description (exit $status, wanted $expected)"; cat "$work/err"; fi
}

echo "cli tests:"
expect_status 0 "--version" "$bin" --version
version=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md | head -1)
grep -qx "switchboard $version" "$work/out" && pass "--version matches the changelog ($version)" || fail "--version matches the changelog ($version)"
expect_status 2 "no command is a usage error" "$bin"
expect_status 2 "unknown command is a usage error" "$bin" frobnicate
expect_status 2 "unknown option is a usage error" "$bin" generate schema --output "$work/out1" --bogus 1
expect_status 2 "a flag the command does not take is a usage error" "$bin" export-proto schema --output "$work/x.proto" --check
[ ! -e "$work/x.proto" ] && pass "and nothing was written" || fail "and nothing was written"
grep -q "this command does not take --check" "$work/err" && pass "the error names the flag" || fail "the error names the flag"
expect_status 2 "missing schema directory is a usage error" "$bin" lint "$work/nope"
[ "$(wc -l < "$work/err")" -le 2 ] && grep -q "^hint: run 'switchboard lint --help'" "$work/err" && pass "a usage error is one line and a hint" || fail "a usage error is one line and a hint"
for command in generate export-proto lint call listen mock-server; do
  expect_status 0 "$command --help" timeout 10 "$bin" "$command" --help
  grep -q "^USAGE: switchboard $command" "$work/out" && pass "$command --help prints its usage" || fail "$command --help prints its usage"
done
expect_status 0 "help generate" "$bin" help generate
grep -q "^USAGE: switchboard generate" "$work/out" && pass "help <command> prints that command's usage" || fail "help <command> prints that command's usage"
expect_status 2 "help for an unknown command is a usage error" "$bin" help frobnicate
expect_status 0 "lint accepts the sample schema" "$bin" lint schema
# A place named inside a message opens from here too, like the diagnostic's own path.
mkdir -p "$work/dup/api"
printf 'package p\nmessage A { 1 x: string }\n' > "$work/dup/api/a.sb"
printf 'package p\nmessage A { 1 x: string }\n' > "$work/dup/api/b.sb"
expect_status 1 "a duplicate type across files is an error" "$bin" lint "$work/dup/api"
grep -q "^$work/dup/api/b.sb:2:9: error: 'A' is already declared at $work/dup/api/a.sb:2:9" "$work/err" \
  && pass "the earlier declaration's path opens from here" || { fail "the earlier declaration's path opens from here"; cat "$work/err"; }
# --layout per-schema-file: one <path below the schema>.sb.swift per schema file, as the build plugin expects.
expect_status 2 "an unknown --layout is a usage error" "$bin" generate schema --output "$work/layout" --layout by-file
expect_status 0 "generate --layout per-schema-file" "$bin" generate schema --output "$work/layout" --layout per-schema-file
[ "$(cd "$work/layout" && ls | tr '\n' ' ')" = "$(cd schema && ls *.sb | sed 's/$/.swift/' | tr '\n' ' ')" ] \
  && pass "one file per schema file, named after it" || { fail "one file per schema file, named after it"; ls "$work/layout"; }
mkdir -p "$work/clash/a"
printf 'package p\nmessage A { 1 x: string }\n' > "$work/clash/a_b.sb"
printf 'package p\nmessage B { 1 x: string }\n' > "$work/clash/a/b.sb"
expect_status 1 "two schema files flattening to one output name are an error" "$bin" generate "$work/clash" --output "$work/clash-out" --layout per-schema-file
grep -q "two outputs are named a_b.sb.swift" "$work/err" && [ ! -e "$work/clash-out" ] && pass "the clash is named and nothing is written" || fail "the clash is named and nothing is written"
# Output names that differ only in case are one file on macOS: refused everywhere.
mkdir -p "$work/caseclash"
printf 'package p\nmessage Chatservice { 1 x: string }\nservice Chat {\n  auth none\n  rpc get(Chatservice) -> Chatservice { POST "/v1/x" }\n}\n' > "$work/caseclash/c.sb"
expect_status 1 "outputs differing only in case are an error" "$bin" generate "$work/caseclash" --output "$work/caseclash-out"
grep -q "one file where case is ignored" "$work/err" && pass "the error says why" || fail "the error says why ($(cat "$work/err"))"
# Diagnostics name files as they open from here; an unclosed block is one error where it opened.
mkdir -p "$work/unclosed"
printf 'package demo\nmessage A {\n  1 x: int32\n  message B { 1 y: string }\n' > "$work/unclosed/a.sb"
expect_status 1 "an unclosed message is an error" "$bin" lint "$work/unclosed"
[ "$(grep -c ': error:' "$work/err")" -eq 1 ] && grep -q "^$work/unclosed/a.sb:2:11: error: message 'A' is never closed" "$work/err" \
  && pass "one error, at the opening brace, with a path that opens from here" || { fail "one error, at the opening brace, with a path that opens from here"; cat "$work/err"; }
expect_status 2 "a schema file instead of its directory is a usage error" "$bin" generate schema/usernames.sb --output "$work/out1"
grep -q "'schema/usernames.sb' is a file; a schema is a directory of \*.sb files (try 'schema')" "$work/err" && pass "the error says what is expected" || fail "the error says what is expected"

expect_status 1 "an import without its --import-path is an error" "$bin" lint Tests/Schemas/imports/app
grep -q "unknown package 'acme.common'; pass its schema directory with --import-path" "$work/err" && pass "the error says to pass --import-path" || fail "the error says to pass --import-path"
expect_status 2 "a missing --import-path directory is a usage error" "$bin" lint Tests/Schemas/imports/app --import-path "$work/nope"
expect_status 0 "lint with --import-path" "$bin" lint Tests/Schemas/imports/app --import-path Tests/Schemas/imports/common=AcmeCommon
mkdir -p "$work/a=b" && cp -R Tests/Schemas/imports/common "$work/a=b/common"
expect_status 0 "an --import-path directory with '=' in its path" "$bin" lint Tests/Schemas/imports/app --import-path "$work/a=b/common"
expect_status 0 "an --import-path directory with '=' in its path, and a module" "$bin" lint Tests/Schemas/imports/app --import-path "$work/a=b/common=AcmeCommon"
mkdir -p "$work/common=Named" && cp Tests/Schemas/imports/common/* "$work/common=Named/"
expect_status 0 "an --import-path directory whose name ends in '=Word' is a directory" "$bin" lint Tests/Schemas/imports/app --import-path "$work/common=Named"

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
grep -q "removed 1 stale" "$work/out" && pass "generate counts the removed file apart from the written ones" || { fail "generate counts the removed file apart from the written ones"; cat "$work/out"; }
expect_status 0 "--check passes after generate" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
[ -f "$work/sdk/HandWritten.swift" ] && [ ! -f "$work/sdk/Zombie.swift" ] && pass "generate removes only stale generated files" || fail "generate removes only stale generated files"
# A hand-written file with the name of a generated one is never overwritten: generate
# refuses and writes nothing, --check names it, and once it is moved all is well.
printf '// hand-written Badge\n' > "$work/sdk/Badge.swift"
echo "// edited" >> "$work/sdk/ChatMessage.swift"
expect_status 1 "generate refuses to overwrite a hand-written file with a generated name" "$bin" generate schema --output "$work/sdk" --module SignalChat
grep -q "Badge.swift was not written by switchboard" "$work/err" && pass "the error names the hand-written file" || { fail "the error names the hand-written file"; cat "$work/err"; }
[ "$(cat "$work/sdk/Badge.swift")" = "// hand-written Badge" ] && pass "the hand-written file is left as it was" || fail "the hand-written file is left as it was"
grep -q "// edited" "$work/sdk/ChatMessage.swift" && pass "nothing else is written while it is in the way" || fail "nothing else is written while it is in the way"
expect_status 1 "--check reports the hand-written file" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
grep -q "not generated: .*Badge.swift" "$work/out" && pass "--check says it is not generated" || { fail "--check says it is not generated"; cat "$work/out"; }
mv "$work/sdk/Badge.swift" "$work/sdk/BadgeNotes.swift"
expect_status 0 "generate writes once it is moved" "$bin" generate schema --output "$work/sdk" --module SignalChat
expect_status 0 "--check passes then" "$bin" generate schema --output "$work/sdk" --module SignalChat --check
rm "$work/sdk/BadgeNotes.swift"
# Entries named *.swift that are not regular files are not ours: left alone, not read (a
# directory made the read trap, a FIFO made it wait for ever).
mkdir "$work/sdk/Folder.swift"
mkfifo "$work/sdk/Pipe.swift"
expect_status 0 "--check passes beside a directory and a FIFO named *.swift" timeout 60 "$bin" generate schema --output "$work/sdk" --module SignalChat --check
expect_status 0 "generate leaves them alone" timeout 60 "$bin" generate schema --output "$work/sdk" --module SignalChat
[ -d "$work/sdk/Folder.swift" ] && [ -p "$work/sdk/Pipe.swift" ] && pass "and they are still there" || fail "and they are still there"
rm -r "$work/sdk/Folder.swift" "$work/sdk/Pipe.swift"
diff -r "$work/sdk" Sources/SignalChat/Generated -x HandWritten.swift >/dev/null && pass "regenerated output is byte-identical" || fail "regenerated output is byte-identical"

# A symlink in the output folder, dangling or not, is replaced as an entry: no file is written
# through it to outside the folder.
mkdir -p "$work/linked"
ln -s "$work/outside-dangling.swift" "$work/linked/Badge.swift"
echo "// keep" > "$work/outside-kept.swift"
ln -s "$work/outside-kept.swift" "$work/linked/Attachment.swift"
expect_status 0 "generate into a folder holding symlinks" "$bin" generate schema --output "$work/linked" --module SignalChat
[ ! -e "$work/outside-dangling.swift" ] && [ "$(cat "$work/outside-kept.swift")" = "// keep" ] && [ -f "$work/linked/Badge.swift" ] && [ ! -L "$work/linked/Badge.swift" ] \
  && pass "generate writes no file through a symlink" || fail "generate writes no file through a symlink"
ls -a "$work/linked" | grep -q "switchboard-.*tmp" && fail "no temporary file is left" || pass "no temporary file is left"
# One a generate that died left (its process is gone) is removed by the next.
echo partial > "$work/linked/.switchboard-999999-1.tmp"
expect_status 0 "generate again" "$bin" generate schema --output "$work/linked" --module SignalChat
[ ! -e "$work/linked/.switchboard-999999-1.tmp" ] && pass "an abandoned temporary file is removed" || fail "an abandoned temporary file is removed"

mkdir -p "$work/bad"
printf 'package demo\nmessage A {\n  1 x: strng\n  1 y: int32\n}\n' > "$work/bad/bad.sb"
expect_status 1 "a bad schema exits 1" "$bin" generate "$work/bad" --output "$work/badout"
grep -q "bad.sb:3:8: error: unknown type 'strng'; did you mean 'string'? \[unknown-type\]" "$work/err" && pass "diagnostics name file, line and column" || fail "diagnostics name file, line and column"
grep -q "duplicate-field-key" "$work/err" && pass "several errors are reported in one run" || fail "several errors are reported in one run"
[ ! -d "$work/badout" ] && pass "nothing is written for a bad schema" || fail "nothing is written for a bad schema"

expect_status 0 "export-proto writes to stdout" "$bin" export-proto schema
grep -q 'message WebSocketMessage {' "$work/out" && pass "export-proto emits messages" || fail "export-proto emits messages"

# call, listen and mock-server: the schema read at run time, over a real loopback socket.
cat > "$work/responses.json" <<'JSON'
{"Usernames.lookUpUsernameHash": [{"status": 200, "body": {"uuid": "aci-alice"}}, {"status": 404}, {"status": 429, "headers": {"Retry-After": "7"}}],
 "AccountUsernames.reserveUsernameHash": {"status": 422, "body": {"field": "usernameHashes", "reason": "too many"}},
 "Keys.getPreKeys": {"status": 200, "body": {"identityKey": "AQID", "devices": [{"deviceId": 3, "registrationId": 77}]}}}
JSON
cat > "$work/pushes.json" <<'JSON'
[{"event": "Messages.incomingMessage", "payload": {"serverGuid": "guid-1", "content": "aGk="}},
 {"event": "Messages.incomingMessage", "payload": {"serverGuid": "guid-2"}}]
JSON
expect_status 2 "mock-server rejects a response for an unknown endpoint" "$bin" mock-server --responses <(echo '{"Nope.nothing": {}}')
# Scripts are checked strictly, with the line of the mistake: never served as a silent 200.
printf '{"Usernames.lookUpUsernameHash": [{"status": 200},\n  {"status": "404"}]}\n' > "$work/bad-status.json"
expect_status 2 "a status given as a string is refused" "$bin" mock-server --responses "$work/bad-status.json"
grep -q 'bad-status.json:1: Usernames.lookUpUsernameHash\[1\]: "status" must be a number' "$work/err" && pass "the error names the file, line and entry" || fail "the error names the file, line and entry"
printf '{\n "Usernames.lookUpUsernameHash": {"statuss": 404}}\n' > "$work/bad-key.json"
expect_status 2 "an unknown response key is refused" "$bin" mock-server --responses "$work/bad-key.json"
grep -q "bad-key.json:2: .*unknown key 'statuss'; did you mean 'status'?" "$work/err" && pass "the error suggests the key" || fail "the error suggests the key"
printf '{"Usernames.lookUpUsernameHash": {"status": 200, "body": {"uuid": 5}}}' > "$work/bad-body.json"
expect_status 2 "a body that does not fit the schema is refused" "$bin" mock-server --responses "$work/bad-body.json"
printf '[{"event": "Messages.incomingMessage"},\n {"event": "Messages.incomingMessage", "paylod": {}}]' > "$work/bad-push.json"
expect_status 2 "an unknown push key is refused" "$bin" mock-server --pushes "$work/bad-push.json"
grep -q "bad-push.json:2: push 1: unknown key 'paylod'" "$work/err" && pass "the push error names its line" || fail "the push error names its line"
printf '{"Usernames.lookUpUsernameHash": {"status": 200},\n "signal.chat.Usernames/LookUpUsernameHash": {"status": 404}}' > "$work/twice.json"
expect_status 2 "two spellings of one endpoint are refused" "$bin" mock-server --responses "$work/twice.json"
grep -q "which another key of this file names too" "$work/err" && pass "the error says both name it" || { fail "the error says both name it"; cat "$work/err"; }
expect_status 2 "an empty option value after '=' is refused" "$bin" export-proto --output= schema
grep -q "option --output needs a value after '='" "$work/err" && pass "and said so (not taking the next argument)" || { fail "and said so (not taking the next argument)"; cat "$work/err"; }
# Script files are read once and bounded: /dev/zero is refused, not read until memory ends,
# and 20,000 pushes are checked in one pass (each found its line by rescanning the file).
expect_status 2 "a script past 64 MiB is refused" "$bin" mock-server --responses /dev/zero
grep -q "larger than 64 MiB" "$work/err" && pass "the error says the file is too large" || fail "the error says the file is too large"
python3 -c 'import json; print(json.dumps([{"event": "Messages.incomingMessage", "payload": {"serverGuid": "g%d" % i}} for i in range(20000)] + [{"event": "Messages.incomingMessage", "paylod": {}}], indent=1))' > "$work/many-pushes.json"
expect_status 2 "20,000 pushes are checked (the last is refused)" timeout 120 "$bin" mock-server --pushes "$work/many-pushes.json"
grep -q "push 20000: unknown key 'paylod'" "$work/err" && pass "the error names the last push" || fail "the error names the last push ($(head -c 200 "$work/err"))"
"$bin" mock-server --responses "$work/responses.json" --pushes "$work/pushes.json" >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
[ -n "$url" ] && pass "mock-server prints its URL" || { fail "mock-server prints its URL"; cat "$work/mock.err"; }
expect_status 0 "call decodes a success as JSON" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q '"uuid": "aci-alice"' "$work/out" && pass "call prints the response" || fail "call prints the response"
expect_status 1 "a declared error exits 1" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "notFound (status 404)" "$work/err" && pass "call names the typed error" || fail "call names the typed error"
expect_status 1 "a rate limit exits 1" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "rateLimited (status 429), retry after 7 s" "$work/err" && pass "call reports Retry-After" || fail "call reports Retry-After"
expect_status 1 "an error body is decoded" "$bin" call --url "$url" AccountUsernames.reserveUsernameHash '{"usernameHashes": ["AQ=="]}' --credentials aci-1.2:pw
grep -q '"reason": "too many"' "$work/err" && pass "call prints the error body" || fail "call prints the error body"
echo '{"identifier": "alice", "deviceId": "3"}' > "$work/request.json"
expect_status 0 "call reads the request from standard input" sh -c "\"$bin\" call --url \"$url\" Keys.getPreKeys - --credentials aci-1.2:pw < \"$work/request.json\""
grep -q '"registrationId": 77' "$work/out" && pass "call decodes a protobuf body" || fail "call decodes a protobuf body"
printf 'aci-1.2:pw\n' > "$work/credentials"
expect_status 1 "call --verbose" "$bin" call --url "$url" AccountUsernames.reserveUsernameHash '{"usernameHashes": ["AQ=="]}' --credentials aci-1.2:pw --verbose
grep -q "^> PUT /v1/accounts/username_hash/reserve" "$work/err" && grep -q "^< 422" "$work/err" && grep -q "^< Content-Type: application/json" "$work/err" \
  && pass "call --verbose prints both heads" || fail "call --verbose prints both heads"
# --verbose shows heads, never a @sensitive path value or a key.
expect_status 1 "call --verbose with a sensitive path value" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "c2VjcmV0LWhhc2g="}' --verbose
grep -q "^> GET /v1/accounts/username_hash/\[REDACTED\]" "$work/err" && ! grep -q "c2VjcmV0LWhhc2g" "$work/err" \
  && pass "call --verbose redacts a sensitive path value" || { fail "call --verbose redacts a sensitive path value"; cat "$work/err"; }
expect_status 0 "call --verbose with a key" "$bin" call --url "$url" SealedSenderKeys.getPreKeys '{"identifier": "alice", "deviceId": "3"}' --key accessKey=c2VjcmV0LWtleS0xMjM0NQ== --verbose
grep -q "^> Unidentified-Access-Key: \[REDACTED\]" "$work/err" && ! grep -q "c2VjcmV0LWtleS0xMjM0NQ" "$work/err" \
  && pass "call --verbose redacts a key" || { fail "call --verbose redacts a key"; cat "$work/err"; }
expect_status 1 "credentials from --credentials-file" "$bin" call --url "$url" AccountUsernames.reserveUsernameHash '{"usernameHashes": ["AQ=="]}' --credentials-file "$work/credentials"
grep -q "too many" "$work/err" && pass "the file's credentials authenticate" || fail "the file's credentials authenticate"
expect_status 1 "credentials from SWITCHBOARD_CREDENTIALS" env SWITCHBOARD_CREDENTIALS=aci-1.2:pw "$bin" call --url "$url" AccountUsernames.reserveUsernameHash '{"usernameHashes": ["AQ=="]}'
grep -q "too many" "$work/err" && pass "the variable's credentials authenticate" || fail "the variable's credentials authenticate"
expect_status 2 "bad credentials in the variable are a usage error" env SWITCHBOARD_CREDENTIALS=nonsense "$bin" call --url "$url" Keys.getPreKeys '{"identifier": "a", "deviceId": "1"}'
grep -q "SWITCHBOARD_CREDENTIALS must look like" "$work/err" && pass "the error names the variable" || fail "the error names the variable"
expect_status 2 "a bad --url is a usage error" "$bin" call --url "http://alice:hunter2@example.com/" Usernames.lookUpUsernameHash '{}'
! grep -q "hunter2" "$work/err" && grep -q "\[REDACTED\]@example.com" "$work/err" && pass "the usage error hides the URL's password" || fail "the usage error hides the URL's password"
expect_status 2 "an account endpoint needs credentials" "$bin" call --url "$url" Keys.getPreKeys '{"identifier": "a", "deviceId": "1"}'
expect_status 2 "a misspelt field is a usage error" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hsh": "AQID"}'
grep -q "LookUpUsernameHashRequest has no field 'hsh'; did you mean 'hash'?" "$work/err" && pass "the error names the field and the nearest one" || fail "the error names the field and the nearest one"
expect_status 2 "an unknown endpoint is a usage error" "$bin" call --url "$url" Usernames.nothing '{}'
expect_status 1 "nothing listening exits 1" "$bin" call --url ws://127.0.0.1:1/v1/websocket/ Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "127.0.0.1:1: connect failed: Connection refused" "$work/err" && pass "connection refused names the host and port" || fail "connection refused names the host and port"
plain_port=$(echo "$url" | sed 's|ws://127.0.0.1:\([0-9]*\)/.*|\1|')
started=$SECONDS
expect_status 1 "wss:// to a plain port fails" timeout 30 "$bin" call --url "wss://127.0.0.1:$plain_port/v1/websocket/" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "127.0.0.1:$plain_port: TLS handshake failed: the server answered without TLS" "$work/err" && [ $((SECONDS - started)) -lt 5 ] \
  && pass "wss:// to a plain port says so at once, naming the host and port" || fail "wss:// to a plain port says so at once, naming the host and port"
expect_status 0 "listen prints pushed events and acknowledges them" "$bin" listen --url "$url" --credentials aci-1.2:pw --count 3 --timeout 20
[ "$(grep -c '"event":"Messages.incomingMessage"' "$work/out")" -eq 2 ] && pass "listen prints each message" || fail "listen prints each message"
grep -q '"serverGuid":"guid-1"' "$work/out" && pass "listen decodes payloads" || fail "listen decodes payloads"
tail -1 "$work/out" | grep -q '"event":"Messages.queueEmpty"' && pass "queue empty comes last" || fail "queue empty comes last"
for _ in $(seq 1 50); do grep -q "2 acknowledged" "$work/mock.out" && break; sleep 0.1; done
grep -q "pushed 2 events: 2 acknowledged, 0 not" "$work/mock.out" && pass "the mock server saw both acknowledgements" || fail "the mock server saw both acknowledgements"
# The username hash is @sensitive: the log shows the path template, never the value.
grep -q "GET /v1/accounts/username_hash/{hash} -> 200" "$work/mock.out" && ! grep -q "username_hash/AQID" "$work/mock.out" \
  && pass "the mock server logs templates, not sensitive path values" || fail "the mock server logs templates, not sensitive path values"
start=$(date +%s)
expect_status 0 "listen --timeout ends a quiet listen" timeout 30 "$bin" listen --url "$url" --timeout 2
grep -q "servers push to authenticated connections only" "$work/err" && pass "listen without credentials says pushes need them" || fail "listen without credentials says pushes need them"
[ $(( $(date +%s) - start )) -lt 15 ] && pass "listen --timeout returns on time" || fail "listen --timeout returns on time"
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# The same scripts over gRPC: mock-server --grpc-port and call --transport grpc.
expect_status 2 "--transport takes websocket or grpc" "$bin" call --url "$url" --transport carrier-pigeon Usernames.lookUpUsernameHash '{}'
expect_status 2 "--transport grpc wants an http(s) URL" "$bin" call --url "$url" --transport grpc Usernames.lookUpUsernameHash '{}'
"$bin" mock-server --grpc-port 0 --responses "$work/responses.json" >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
grpc_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.out" | head -1) || true
[ -n "$grpc_url" ] && pass "mock-server --grpc-port prints its gRPC address" || { fail "mock-server --grpc-port prints its gRPC address"; cat "$work/mock.err"; }
expect_status 0 "call --transport grpc decodes a success" "$bin" call --transport grpc --url "$grpc_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q '"uuid": "aci-alice"' "$work/out" && pass "a JSON service's answer crosses gRPC in protobuf" || fail "a JSON service's answer crosses gRPC in protobuf"
expect_status 1 "a declared error over gRPC exits 1" "$bin" call --transport grpc --url "$grpc_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "notFound (status 404)" "$work/err" && pass "the gRPC error is the same typed error" || { fail "the gRPC error is the same typed error"; cat "$work/err"; }
expect_status 1 "a rate limit over gRPC" "$bin" call --transport grpc --url "$grpc_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "rateLimited (status 429), retry after 7 s" "$work/err" && pass "Retry-After crosses gRPC" || { fail "Retry-After crosses gRPC"; cat "$work/err"; }
expect_status 1 "an error body over gRPC" "$bin" call --transport grpc --url "$grpc_url" AccountUsernames.reserveUsernameHash '{"usernameHashes": ["AQ=="]}' --credentials aci-1.2:pw
grep -q '"reason": "too many"' "$work/err" && pass "the error body crosses gRPC" || { fail "the error body crosses gRPC"; cat "$work/err"; }
expect_status 0 "a protobuf service over gRPC" "$bin" call --transport grpc --url "$grpc_url" Keys.getPreKeys '{"identifier": "alice", "deviceId": "3"}' --credentials aci-1.2:pw
grep -q '"registrationId": 77' "$work/out" && pass "call --transport grpc decodes a protobuf answer" || fail "call --transport grpc decodes a protobuf answer"
expect_status 2 "an account endpoint over gRPC needs credentials" "$bin" call --transport grpc --url "$grpc_url" Keys.getPreKeys '{"identifier": "a", "deviceId": "1"}'
grep -q "gRPC /signal.chat.Usernames/LookUpUsernameHash -> 200" "$work/mock.out" && pass "the mock server logs gRPC calls by rpcName" || fail "the mock server logs gRPC calls by rpcName"
# One process, both transports: the same mock-server answers on its WebSocket port too, from
# the same scripts. The lookup's script, which the three gRPC lookups above took to its last
# response (429), goes on from there over the WebSocket; gRPC still answers afterwards.
both_url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
[ -n "$both_url" ] && pass "mock-server --grpc-port prints its WebSocket URL too" || { fail "mock-server --grpc-port prints its WebSocket URL too"; cat "$work/mock.out" "$work/mock.err"; }
expect_status 0 "the same mock-server answers over the WebSocket" "$bin" call --url "$both_url" Keys.getPreKeys '{"identifier": "alice", "deviceId": "3"}' --credentials aci-1.2:pw
grep -q '"registrationId": 77' "$work/out" && pass "the WebSocket answer is the script's" || { fail "the WebSocket answer is the script's"; cat "$work/out" "$work/err"; }
expect_status 1 "a WebSocket lookup after the gRPC ones" "$bin" call --url "$both_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
grep -q "rateLimited (status 429), retry after 7 s" "$work/err" && pass "both transports take turns in one script" || { fail "both transports take turns in one script"; cat "$work/err"; }
expect_status 0 "gRPC still answers after the WebSocket calls" "$bin" call --transport grpc --url "$grpc_url" Keys.getPreKeys '{"identifier": "alice", "deviceId": "3"}' --credentials aci-1.2:pw
grep -q '"registrationId": 77' "$work/out" && pass "and decodes the same answer" || fail "and decodes the same answer"
for _ in $(seq 1 50); do grep -q "GET /v1/accounts/username_hash/{hash} -> 429" "$work/mock.out" && break; sleep 0.1; done
grep -q "GET /v2/keys/{identifier}/{deviceId} -> 200 (Keys.getPreKeys)" "$work/mock.out" && grep -q "GET /v1/accounts/username_hash/{hash} -> 429 (Usernames.lookUpUsernameHash)" "$work/mock.out" \
  && pass "the one mock server logs the WebSocket calls beside the gRPC ones" || { fail "the one mock server logs the WebSocket calls beside the gRPC ones"; cat "$work/mock.out"; }
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# Scripted pushes over gRPC: mock-server --grpc-port delivers them to each authenticated
# subscription to their service's events (SwitchboardEvents), in order, then queue empty;
# listen --transport grpc prints them and acknowledges each (SwitchboardAcknowledge), and the
# server's log counts the acknowledgements.
cat > "$work/grpc-pushes.json" <<'JSON'
[{"event": "Messages.incomingMessage", "payload": {"serverGuid": "guid-1", "content": "aGk="}},
 {"event": "Messages.incomingMessage", "payload": {"serverGuid": "guid-2"}},
 {"event": "Messages.incomingMessage", "payload": {"serverGuid": "guid-3"}}]
JSON
"$bin" mock-server --grpc-port 0 --pushes "$work/grpc-pushes.json" >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
grpc_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.out" | head -1) || true
expect_status 2 "listen --transport grpc wants an http(s) URL" timeout 30 "$bin" listen --transport grpc --url ws://127.0.0.1:1/v1/websocket/ --count 1 --timeout 5
expect_status 2 "listen --transport takes websocket or grpc" timeout 30 "$bin" listen --transport carrier-pigeon --url "$grpc_url" --count 1 --timeout 5
expect_status 0 "listen --transport grpc prints pushed events and acknowledges them" \
  timeout 60 "$bin" listen --transport grpc --url "$grpc_url" --credentials aci-1.2:pw --count 4 --timeout 20
[ "$(grep -o '"serverGuid":"guid-[0-9]"' "$work/out" | tr '\n' ' ')" = '"serverGuid":"guid-1" "serverGuid":"guid-2" "serverGuid":"guid-3" ' ] \
  && pass "listen --transport grpc prints the pushes in order" || { fail "listen --transport grpc prints the pushes in order"; cat "$work/out" "$work/err"; }
tail -1 "$work/out" | grep -q '"event":"Messages.queueEmpty"' && pass "queue empty comes last over gRPC" || fail "queue empty comes last over gRPC"
for _ in $(seq 1 100); do grep -q "gRPC signal.chat.Messages: pushed" "$work/mock.out" && break; sleep 0.1; done
grep -q "gRPC signal.chat.Messages: pushed 3 events: 3 acknowledged, 0 not" "$work/mock.out" \
  && pass "the mock server saw the three acknowledgements over gRPC" || { fail "the mock server saw the three acknowledgements over gRPC"; cat "$work/mock.out" "$work/mock.err"; }
# Without credentials nothing is subscribed to (every service with events needs an account):
# a quiet listen that ends 0 at its timeout, on time.
start=$(date +%s)
expect_status 0 "listen --transport grpc without credentials ends at its timeout" timeout 30 "$bin" listen --transport grpc --url "$grpc_url" --timeout 2
[ $(( $(date +%s) - start )) -lt 15 ] && pass "and returns on time" || fail "and returns on time"
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# HTTP/2 conformance of the gRPC server: h2spec's case list (http2, hpack, generic) and our
# own hostile cases, each on a connection of its own; every case passes, and the server
# still answers afterwards.
"$bin" mock-server --grpc-port 0 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
h2_port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.out" | head -1 | sed 's/.*://') || true
if timeout 300 python3 Tests/Peers/h2_conformance.py "$h2_port" >"$work/h2.out" 2>&1; then
  pass "HTTP/2 conformance: $(grep '^TOTAL' "$work/h2.out")"
else
  fail "HTTP/2 conformance"; grep -A4 '^FAIL' "$work/h2.out" || true; tail -3 "$work/h2.out"
fi
grep -q "server alive after run: yes" "$work/h2.out" && pass "the gRPC server answers after the conformance cases" || fail "the gRPC server answers after the conformance cases"
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# What a hostile server says reaches the terminal escaped: pushed paths, payload strings,
# response strings and close reasons carry ESC, BEL, DEL, C1, a bidi override and CR LF.
no_controls() { # file: no raw control character but line feed and tab, no bidi override
  python3 -c 'import sys; t = open(sys.argv[1], "rb").read().decode("utf-8", "replace"); sys.exit(any((ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in t))' "$1"
}
for mode in push answer close; do
  python3 Tests/Peers/chat_escape_server.py "$mode" < <(sleep 60) > "$work/escape-$mode.port" 2>&1 &
  escape_pid=$!
  for _ in $(seq 1 100); do [ -s "$work/escape-$mode.port" ] && break; sleep 0.1; done
  escape_url="ws://127.0.0.1:$(head -1 "$work/escape-$mode.port")/v1/websocket/"
  if [ "$mode" = push ]; then
    set +e; timeout 30 "$bin" listen --url "$escape_url" --credentials aci-1.2:pw --count 1 --timeout 10 >"$work/escape.out" 2>&1; set -e
  else
    set +e; timeout 30 "$bin" call --url "$escape_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}' >"$work/escape.out" 2>&1; set -e
  fi
  grep -q 'u001b' "$work/escape.out" && no_controls "$work/escape.out" \
    && pass "$mode: server-chosen text is escaped for the terminal" || { fail "$mode: server-chosen text is escaped for the terminal"; cat -v "$work/escape.out"; }
  kill "$escape_pid" 2>/dev/null || true; wait "$escape_pid" 2>/dev/null || true
  escape_pid=""
done

# Option parsing: a value that is an option, a single-value option given twice, and `--`.
expect_status 2 "an option's missing value is not the next flag" "$bin" generate schema --output --check
[ ! -e "$root/--check" ] && pass "and no folder named --check was written" || { fail "and no folder named --check was written"; rm -rf "$root/--check"; }
grep -q "needs a value, got the option --check" "$work/err" && pass "the error says which value is missing" || fail "the error says which value is missing"
expect_status 2 "a single-value option given twice is a usage error" "$bin" generate schema --output "$work/twice-a" --output "$work/twice-b"
[ ! -e "$work/twice-a" ] && [ ! -e "$work/twice-b" ] && pass "and nothing was written" || fail "and nothing was written"
expect_status 0 "-- ends the options" "$bin" lint -- schema
expect_status 2 "--credentials and --credentials-file together are a usage error" "$bin" call --url ws://127.0.0.1:1/ Keys.getPreKeys '{}' --credentials a.1:b --credentials-file "$work/credentials"
# URLs: a port past 65535 must not be cut to 16 bits (70000 is port 4464), nor a long one dropped.
for bad in "ws://127.0.0.1:70000/v1/websocket/" "ws://127.0.0.1:99999999999999999999/" "ws:///v1/websocket/" "ws://127.0.0.1:/x" "ws://[::1/x"; do
  expect_status 2 "--url $bad is a usage error" "$bin" call --url "$bad" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
done
expect_status 2 "a gRPC --url with port 70000 is a usage error" "$bin" call --transport grpc --url http://127.0.0.1:70000 Usernames.lookUpUsernameHash '{"hash": "AQID"}'
# Standard input: a read error and endless input are usage errors, not a trap or unbounded memory.
expect_status 2 "a directory as standard input is a usage error" sh -c "\"$bin\" call --url ws://127.0.0.1:1/ Usernames.lookUpUsernameHash - < /tmp"
grep -q "cannot read standard input" "$work/err" && pass "the error names standard input" || { fail "the error names standard input"; cat "$work/err"; }
expect_status 2 "endless standard input is refused past 64 MiB" timeout 60 sh -c "\"$bin\" call --url ws://127.0.0.1:1/ Usernames.lookUpUsernameHash - < /dev/zero"
grep -q "standard input is larger than 64 MiB" "$work/err" && pass "the error gives the limit" || { fail "the error gives the limit"; cat "$work/err"; }
expect_status 2 "an endless --credentials-file is refused" timeout 30 "$bin" call --url ws://127.0.0.1:1/ Keys.getPreKeys '{}' --credentials-file /dev/zero

# A mock server whose reader went away (`| head -1`) keeps serving: its log lines are dropped,
# it does not die of SIGPIPE.
mkfifo "$work/log.fifo"
"$bin" mock-server >"$work/log.fifo" 2>"$work/mock.err" &
mock_pid=$!
url=$(head -1 "$work/log.fifo" | grep -o 'ws://[^ ]*')
expect_status 0 "a call to a mock server nobody reads" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
expect_status 0 "a second call, after its log line met a closed pipe" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
kill -0 "$mock_pid" 2>/dev/null && pass "the mock server is still running" || { fail "the mock server is still running"; cat "$work/mock.err"; }
kill "$mock_pid" 2>/dev/null; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# listen that never gets connected (a server that never answers the upgrade) ends 1, not 0.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4); print(s.getsockname()[1], flush=True)
c, _ = s.accept(); time.sleep(20)' > "$work/silent.port" &
escape_pid=$!
for _ in $(seq 1 100); do [ -s "$work/silent.port" ] && break; sleep 0.1; done
expect_status 1 "listen that never connected exits 1 at its timeout" timeout 30 "$bin" listen --url "ws://127.0.0.1:$(head -1 "$work/silent.port")/v1/websocket/" --timeout 2
grep -q "not connected within" "$work/err" && pass "and says it never connected" || { fail "and says it never connected"; cat "$work/err"; }
kill "$escape_pid" 2>/dev/null || true; wait "$escape_pid" 2>/dev/null || true; escape_pid=""

# --max-connections holds for --grpc-port too: a second connection is closed, the first kept.
"$bin" mock-server --grpc-port 0 --max-connections 1 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
grpc_port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.out" | head -1 | sed 's|.*:||') || true
if timeout 30 python3 - "$grpc_port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
first = socket.create_connection(("127.0.0.1", port))
first.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
first.settimeout(5)
assert first.recv(9), "the first connection got no SETTINGS"
second = socket.create_connection(("127.0.0.1", port))
second.settimeout(5)
try:
    data = second.recv(1024)
    assert data == b"", "the second connection was served: %r" % data[:20]
except ConnectionResetError:
    pass
first.settimeout(0.5)
try:
    assert first.recv(1024) != b"", "the first connection was closed"
except socket.timeout:
    pass
PY
then pass "mock-server --max-connections 1 refuses a second gRPC connection"; else fail "mock-server --max-connections 1 refuses a second gRPC connection"; fi
kill "$mock_pid" 2>/dev/null; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# export-catalogue never writes through a service folder that is a symbolic link.
"$bin" export-catalogue schema --output "$work/catalogue-linked" >/dev/null
mkdir -p "$work/outside-catalogue"
rm -rf "$work/catalogue-linked/usernames"
ln -s "$work/outside-catalogue" "$work/catalogue-linked/usernames"
expect_status 1 "export-catalogue refuses a linked service folder" "$bin" export-catalogue schema --output "$work/catalogue-linked"
[ -z "$(ls -A "$work/outside-catalogue")" ] && pass "and wrote nothing through it" || { fail "and wrote nothing through it"; ls "$work/outside-catalogue"; }
expect_status 1 "export-catalogue --check reports the linked folder" "$bin" export-catalogue schema --output "$work/catalogue-linked" --check
grep -q "not a folder (a symbolic link): .*usernames" "$work/out" && pass "--check names it" || { fail "--check names it"; cat "$work/out"; }

# A provider's own services.yml is never overwritten, and a folder named *.jtd.json in an
# exported service folder is not removed.
"$bin" export-catalogue schema --output "$work/catalogue-own" >/dev/null
printf 'services: [] # the provider'"'"'s own\n' > "$work/catalogue-own/services.yml"
mkdir -p "$work/catalogue-own/usernames/notes.jtd.json"
echo keep > "$work/catalogue-own/usernames/notes.jtd.json/keep.txt"
expect_status 1 "export-catalogue refuses to overwrite a hand-written services.yml" "$bin" export-catalogue schema --output "$work/catalogue-own"
grep -q "services.yml was not written by switchboard" "$work/err" && pass "and names it" || { fail "and names it"; cat "$work/err"; }
grep -q "the provider's own" "$work/catalogue-own/services.yml" && pass "and leaves it as it was" || fail "and leaves it as it was"
expect_status 1 "export-catalogue --check reports it" "$bin" export-catalogue schema --output "$work/catalogue-own" --check
grep -q "not generated: .*services.yml" "$work/out" && pass "as not generated" || { fail "as not generated"; cat "$work/out"; }
rm "$work/catalogue-own/services.yml"
expect_status 0 "export-catalogue writes once it is gone" "$bin" export-catalogue schema --output "$work/catalogue-own"
[ -f "$work/catalogue-own/usernames/notes.jtd.json/keep.txt" ] && pass "a folder named *.jtd.json is left alone" || fail "a folder named *.jtd.json is left alone"

# Anyone who may make folders in a catalogue can leave a FIFO where an export looks for its
# own files, or a link to a device where it compares them: neither may stall the export.
mkdir -p "$work/catalogue-fifo/planted"
mkfifo "$work/catalogue-fifo/planted/definition.yml"
expect_status 0 "export-catalogue passes a FIFO named definition.yml" timeout 20 "$bin" export-catalogue schema --output "$work/catalogue-fifo"
expect_status 0 "and --check too" timeout 20 "$bin" export-catalogue schema --output "$work/catalogue-fifo" --check
rm "$work/catalogue-fifo/services.yml"
ln -s /dev/zero "$work/catalogue-fifo/services.yml"
expect_status 1 "export-catalogue --check with services.yml linked to /dev/zero ends" timeout 20 "$bin" export-catalogue schema --output "$work/catalogue-fifo" --check
grep -q "missing: .*services.yml" "$work/out" && pass "and reports it" || { fail "and reports it"; cat "$work/out"; }
expect_status 0 "export-catalogue replaces the link" timeout 20 "$bin" export-catalogue schema --output "$work/catalogue-fifo"
[ -f "$work/catalogue-fifo/services.yml" ] && [ ! -L "$work/catalogue-fifo/services.yml" ] && pass "with the index itself" || fail "with the index itself"

# A burst of connections that exhausts the server's file descriptors must not stop it
# accepting: with a small descriptor limit, hold 80 idle sockets, drop them, then call.
prlimit --nofile=48:48 "$bin" mock-server --responses "$work/responses.json" >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
port=$(echo "$url" | sed 's|ws://127.0.0.1:\([0-9]*\)/.*|\1|')
timeout 30 python3 - "$port" <<'PY'
import socket, sys, time
held = []
for _ in range(80):
    try:
        held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
    except OSError:
        break
# More connections than the server has descriptors, or nothing was exhausted.
assert len(held) >= 48, f"only {len(held)} connections were opened"
time.sleep(1.0)
for held_socket in held:
    held_socket.close()
PY
expect_status 0 "the server accepts again after running out of descriptors" timeout 60 "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# Ended connections give their sockets back: under a 64-descriptor limit, 300
# WebSocket connections from Python websockets come and go (half closed by the client,
# half dropped without a close frame), then the server still answers and holds no more
# sockets than before them.
prlimit --nofile=64:64 "$bin" mock-server --responses "$work/responses.json" >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
sockets() { ls -l "/proc/$mock_pid/fd" | grep -c socket; }
before=$(sockets)
timeout 120 python3 - "$url" <<'PY'
import asyncio, sys, websockets
async def main():
    for index in range(300):
        connection = await websockets.connect(sys.argv[1], open_timeout=10)
        if index % 2 == 0:
            await connection.close()
        else:
            connection.transport.abort()
asyncio.run(main())
PY
after=$before
for _ in $(seq 1 50); do after=$(sockets); [ "$after" -le "$before" ] && break; sleep 0.1; done
[ "$after" -le "$before" ] && pass "300 ended connections leave no socket behind" || fail "300 ended connections leave no socket behind ($before before, $after after)"
expect_status 0 "the server still answers after 300 connections under a 64-descriptor limit" timeout 60 "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# --require-credentials: only the given credentials open the authenticated connection.
expect_status 2 "--require-credentials without credentials is a usage error" "$bin" mock-server --require-credentials
expect_status 2 "credentials without --require-credentials are a usage error" "$bin" mock-server --credentials aci-1.2:pw
"$bin" mock-server --require-credentials --credentials aci-1.2:pw >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
strict_url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
expect_status 1 "--require-credentials refuses other credentials" "$bin" call --url "$strict_url" Keys.getPreKeys '{"identifier": "a", "deviceId": "1"}' --credentials aci-1.2:wrong
grep -q "credentials rejected" "$work/err" && pass "the refusal says the credentials were rejected" || fail "the refusal says the credentials were rejected"
expect_status 0 "--require-credentials accepts its credentials" "$bin" call --url "$strict_url" Keys.getPreKeys '{"identifier": "a", "deviceId": "1"}' --credentials aci-1.2:pw
expect_status 0 "--require-credentials still serves the unauthenticated connection" "$bin" call --url "$strict_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# $SWITCHBOARD_CREDENTIALS exported for `call` does not stop a plain mock server.
SWITCHBOARD_CREDENTIALS=aci-1.2:pw "$bin" mock-server >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
grep -q "listening on" "$work/mock.out" && pass "mock-server starts with SWITCHBOARD_CREDENTIALS exported" || fail "mock-server starts with SWITCHBOARD_CREDENTIALS exported ($(cat "$work/mock.err"))"
kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# The mock server's limits: one client at a time, and a silent one let go after a second.
expect_status 2 "--max-connections must be positive" "$bin" mock-server --max-connections 0
"$bin" mock-server --max-connections 1 --idle-timeout 1 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
timeout 30 python3 - "$url" <<'PY' && pass "a full mock server answers 503, and closes a silent client with 1001" || fail "a full mock server answers 503, and closes a silent client with 1001"
import asyncio, sys, websockets
async def main():
    first = await websockets.connect(sys.argv[1], ping_interval=None)
    try:
        await websockets.connect(sys.argv[1], open_timeout=5)
        sys.exit("a second client was admitted")
    except websockets.exceptions.InvalidStatus as error:
        assert error.response.status_code == 503, error
    await asyncio.wait_for(first.wait_closed(), 10)
    assert first.close_code == 1001, first.close_code
asyncio.run(main())
PY
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# --max-message-bytes bounds a message on both transports: 6,000 bytes of hash pass the
# default 512 KiB and are refused at 4,096 (1009 on the WebSocket; over gRPC
# RESOURCE_EXHAUSTED, which the endpoint's declared 429 receives); a small one still passes.
expect_status 2 "--max-message-bytes below a control frame's size is a usage error" "$bin" mock-server --max-message-bytes 100
big_hash=$(python3 -c 'import base64; print(base64.b64encode(bytes(6000)).decode())')
"$bin" mock-server --grpc-port 0 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
expect_status 0 "a 6,000-byte request passes the default message size" "$bin" call --url "$url" Usernames.lookUpUsernameHash "{\"hash\": \"$big_hash\"}"
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""
"$bin" mock-server --grpc-port 0 --max-message-bytes 4096 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "gRPC (h2c) on"
url=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1) || true
grpc_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.out" | head -1) || true
expect_status 1 "--max-message-bytes 4096 refuses it on the WebSocket" "$bin" call --url "$url" Usernames.lookUpUsernameHash "{\"hash\": \"$big_hash\"}"
grep -q "(1009): frame of [0-9]* bytes exceeds the limit of 4096" "$work/err" && pass "with 1009 at 4,096 bytes" || { fail "with 1009 at 4,096 bytes"; cat "$work/err"; }
expect_status 1 "and over gRPC" "$bin" call --transport grpc --url "$grpc_url" Usernames.lookUpUsernameHash "{\"hash\": \"$big_hash\"}"
grep -q "rateLimited (status 429)" "$work/err" && pass "as RESOURCE_EXHAUSTED" || { fail "as RESOURCE_EXHAUSTED"; cat "$work/err"; }
expect_status 0 "a small request still passes --max-message-bytes 4096" "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
expect_status 0 "and over gRPC" "$bin" call --transport grpc --url "$grpc_url" Usernames.lookUpUsernameHash '{"hash": "AQID"}'
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# A client trickling one message a byte at a time is closed with 1008 at --message-timeout,
# though every byte keeps it from being idle.
expect_status 2 "--message-timeout must not be negative" "$bin" mock-server --message-timeout -1
"$bin" mock-server --message-timeout 1 >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
wait_for_mock "listening on"
port=$(grep -o 'ws://[^ ]*' "$work/mock.out" | head -1 | sed -E 's#ws://[^:]+:([0-9]+).*#\1#') || true
timeout 30 python3 - "$port" <<'PY' && pass "a trickling client is closed with 1008 at --message-timeout" || fail "a trickling client is closed with 1008 at --message-timeout"
import os, socket, struct, sys, threading, time
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
sock.sendall(b"GET /v1/websocket/ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    chunk = sock.recv(1)
    assert chunk, "closed during the upgrade"
    head += chunk
assert head.startswith(b"HTTP/1.1 101"), head
key = os.urandom(4)
payload = bytes(a ^ key[i % 4] for i, a in enumerate(b"x" * 100))
frame = bytes([0x82, 0x80 | 100]) + key + payload
def trickle():
    try:
        for byte in frame:
            sock.send(bytes([byte]))
            time.sleep(0.1)
    except OSError:
        pass
threading.Thread(target=trickle, daemon=True).start()
started = time.monotonic()
reply = b""
while len(reply) < 4:
    chunk = sock.recv(4 - len(reply))
    assert chunk, "closed without a close frame"
    reply += chunk
assert reply[0] == 0x88, reply
assert struct.unpack(">H", reply[2:4])[0] == 1008, reply
assert time.monotonic() - started < 8, "the close came only after the whole frame"
PY
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""

# A reader that keeps standard output open but stops reading must not stall the server:
# handlers only queue their log lines for a writer thread of its own (written in the
# handlers, they blocked once the pipe was full, and every call timed out). The reader takes
# the URL line from a FIFO shrunk to one page and reads nothing more while 200 calls are
# made; then the server is stopped and the reader drains the pipe: every call's line is
# there, after the URL line.
mkfifo "$work/stalled.fifo"
python3 - "$work/stalled.fifo" "$work/stalled" <<'PY' &
import fcntl, os, select, sys, time
fifo, prefix = sys.argv[1], sys.argv[2]
fd = os.open(fifo, os.O_RDONLY)
try:
    fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
except OSError:
    pass
first = b""
while not first.endswith(b"\n"):
    chunk = os.read(fd, 1)
    if not chunk:
        break
    first += chunk
with open(prefix + ".url.tmp", "wb") as out:
    out.write(first)
os.rename(prefix + ".url.tmp", prefix + ".url")
# Stalled until told to drain (or for at most five minutes).
deadline = time.monotonic() + 300
while not os.path.exists(prefix + ".drain") and time.monotonic() < deadline:
    time.sleep(0.1)
rest = b""
deadline = time.monotonic() + 20
while rest.count(b" -> 200 ") < 200 and time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.5)
    if ready:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        rest += chunk
with open(prefix + ".out.tmp", "wb") as out:
    out.write(first + rest)
os.rename(prefix + ".out.tmp", prefix + ".out")
PY
escape_pid=$!
"$bin" mock-server >"$work/stalled.fifo" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$work/stalled.url" ] && break; sleep 0.1; done
url=$(grep -o 'ws://[^ ]*' "$work/stalled.url" 2>/dev/null | head -1 || true)
[ -n "$url" ] && pass "mock-server writes its URL line to a FIFO" || { fail "mock-server writes its URL line to a FIFO"; cat "$work/mock.err"; }
answered=0
if [ -n "$url" ]; then
  for _ in $(seq 1 200); do
    timeout 10 "$bin" call --url "$url" Usernames.lookUpUsernameHash '{"hash": "AQID"}' >/dev/null 2>"$work/err" || break
    answered=$((answered + 1))
  done
fi
[ "$answered" -eq 200 ] && pass "200 calls pass while nobody reads the mock server's output" \
  || { fail "200 calls pass while nobody reads the mock server's output ($answered passed)"; cat "$work/err"; }
# Stopped with SIGTERM while most lines still wait in its queue: it writes them (for up to a
# second) before it exits, so none is lost once the reader drains the pipe.
kill -TERM "$mock_pid" 2>/dev/null || true
touch "$work/stalled.drain"
for _ in $(seq 1 300); do [ -e "$work/stalled.out" ] && break; sleep 0.1; done
logged=$(grep -c "^GET /v1/accounts/username_hash/{hash} -> 200 " "$work/stalled.out" 2>/dev/null || true)
head -1 "$work/stalled.out" 2>/dev/null | grep -q "listening on ws://" && [ "$logged" = "$answered" ] \
  && pass "and stopped with SIGTERM, then read, the log has the URL line first and a line per call" \
  || fail "and stopped with SIGTERM, then read, the log has the URL line first and a line per call ($logged lines for $answered calls)"
kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; mock_pid=""
kill "$escape_pid" 2>/dev/null || true; wait "$escape_pid" 2>/dev/null || true; escape_pid=""

# The session example runs its whole lifecycle against the mock server.
swift build "${SWIFT_BUILD_FLAGS[@]}" --product session-demo >/dev/null
demo="$(dirname "$bin")/session-demo"
if [ -x "$demo" ] && timeout 120 "$demo" > "$work/demo.out" 2>&1; then pass "session-demo runs"; else fail "session-demo runs"; cat "$work/demo.out" 2>/dev/null | tail -5; fi
states=$(awk '/^[A-Z_]+ /{print $1}' "$work/demo.out" | tr '\n' ' ')
expected="CONNECTING CONNECTED DISCONNECTED RECONNECTING CONNECTED DISCONNECTED OFFLINE RECONNECTING CONNECTED DISCONNECTED RECONNECTING ERROR DISPOSE READY "
[ "$states" = "$expected" ] && pass "session-demo walks the lifecycle" || fail "session-demo walks the lifecycle (got: $states)"

if [ "$failures" -ne 0 ]; then echo "cli tests: $failures failed"; exit 1; fi
echo "cli tests: all passed"
