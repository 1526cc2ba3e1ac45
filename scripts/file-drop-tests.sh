#!/usr/bin/env bash
# Two processes exchange requests through a published catalogue's folders (the file-drop
# transport), as two apps on one device would:
#   1. export the sample schema's catalogue (switchboard export-catalogue) and read it back
#      with PyYAML, a YAML reader nobody here wrote;
#   2. a consumer process sends 1,000 lookups while the provider process is killed (SIGKILL)
#      and restarted five times: every request gets exactly one response, none is served
#      twice, and only requests in hand at a kill are answered "interrupted";
#   3. a consumer killed mid-stream (in a catalogue folder of its own, so none of step 2's
#      documents count) leaves only whole documents, and each of its requests is answered
#      but for at most the provider's concurrency (8) in hand when the provider is stopped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/common.sh

swift build "${SWIFT_BUILD_FLAGS[@]}" --product file-drop-demo >/dev/null
demo="$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/file-drop-demo"
bin=$(switchboard_bin)
work=$(mktemp -d)
provider_pid=""
consumer_pid=""
cleanup() {
  [ -n "$provider_pid" ] && kill -9 "$provider_pid" 2>/dev/null || true
  [ -n "$consumer_pid" ] && kill -9 "$consumer_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$((failures + 1)); }

echo "file-drop transport (two processes, one folder):"
"$bin" export-catalogue schema --output "$work/catalogue" >/dev/null 2>&1
"$bin" export-catalogue schema --output "$work/catalogue" --check >/dev/null 2>&1 && pass "export-catalogue --check accepts its own output" \
  || fail "export-catalogue --check accepts its own output"
cp "$work/catalogue/services.yml" "$work/services.yml.saved"
echo "# edited" >>"$work/catalogue/services.yml"
if "$bin" export-catalogue schema --output "$work/catalogue" --check >"$work/check.log" 2>&1; then fail "--check missed an edited file"
elif grep -q "stale: .*services.yml" "$work/check.log"; then pass "export-catalogue --check names a file that differs"; else fail "--check output"; cat "$work/check.log"; fi
cp "$work/services.yml.saved" "$work/catalogue/services.yml"
# A file an earlier export wrote for an rpc the schema no longer has: --check lists it as
# extra, and exporting again removes it; a file of the provider's own is left alone.
echo '{}' >"$work/catalogue/usernames/gone_rpc.request.jtd.json"
echo 'notes' >"$work/catalogue/usernames/README.txt"
if "$bin" export-catalogue schema --output "$work/catalogue" --check >"$work/check.log" 2>&1; then fail "--check missed an extra file"
elif grep -q "extra: .*usernames/gone_rpc.request.jtd.json" "$work/check.log"; then pass "export-catalogue --check lists an extra file"; else fail "--check extra output"; cat "$work/check.log"; fi
"$bin" export-catalogue schema --output "$work/catalogue" >/dev/null 2>&1
[ ! -e "$work/catalogue/usernames/gone_rpc.request.jtd.json" ] && [ -e "$work/catalogue/usernames/README.txt" ] \
  && pass "export-catalogue removes what the schema no longer has, and only that" || fail "export-catalogue removes what the schema no longer has, and only that"
rm -f "$work/catalogue/usernames/README.txt"
# A consumer's own file deep in a request folder is not the export's to list or remove.
mkdir -p "$work/catalogue/usernames/look_up_username_hash/app"
echo '{}' >"$work/catalogue/usernames/look_up_username_hash/app/mine.jtd.json"
"$bin" export-catalogue schema --output "$work/catalogue" --check >/dev/null 2>&1 && "$bin" export-catalogue schema --output "$work/catalogue" >/dev/null 2>&1 \
  && [ -e "$work/catalogue/usernames/look_up_username_hash/app/mine.jtd.json" ] \
  && pass "export-catalogue leaves request folders alone" || fail "export-catalogue leaves request folders alone"
rm -rf "$work/catalogue/usernames/look_up_username_hash"
# A provider's folder the export did not write keeps its files, whatever their names.
mkdir -p "$work/catalogue/unrelated"
echo 'spec: mine' >"$work/catalogue/unrelated/definition.yml"
echo '{}' >"$work/catalogue/unrelated/thing.jtd.json"
"$bin" export-catalogue schema --output "$work/catalogue" --check >/dev/null 2>&1 && "$bin" export-catalogue schema --output "$work/catalogue" >/dev/null 2>&1   && [ -e "$work/catalogue/unrelated/definition.yml" ] && [ -e "$work/catalogue/unrelated/thing.jtd.json" ]   && pass "export-catalogue leaves folders it did not write alone" || fail "export-catalogue leaves folders it did not write alone"
rm -rf "$work/catalogue/unrelated"
# rpcs whose names snake_case alike would share a file: refused, not overwritten.
mkdir -p "$work/snake"
printf 'package p\nmessage M { 1 x: string }\nservice S {\n  auth none\n  rpc getURL(M) -> M { POST "/v1/a" }\n  rpc getUrl(M) -> M { POST "/v1/b" }\n}\n' >"$work/snake/s.sb"
if "$bin" export-catalogue "$work/snake" --output "$work/snake-out" 2>"$work/snake.log"; then fail "rpcs sharing a catalogue file are refused"
elif grep -q "two catalogue files are named" "$work/snake.log"; then pass "rpcs sharing a catalogue file are refused"; else fail "rpcs sharing a catalogue file are refused"; cat "$work/snake.log"; fi
if python3 - "$work/catalogue" <<'PY'
import glob, sys, yaml
root = sys.argv[1]
index = yaml.safe_load(open(f"{root}/services.yml"))
assert index["spec"] == "Services" and index["versions"] == 1, index
usernames = next(s for s in index["services"] if s["spec"] == "signal.chat.Usernames")
assert usernames["versions"] == "1-2" and usernames["countries"] == ["!PRK"] and usernames["folder"] == "usernames", usernames
for service in index["services"]:
    definition = yaml.safe_load(open(f"{root}/{service['folder']}/definition.yml"))
    assert definition["spec"] == service["spec"], definition
    for endpoint in definition["endpoints"]:
        assert endpoint["rpc"].startswith(service["spec"] + "/") and endpoint["folder"], endpoint
PY
then pass "PyYAML reads services.yml and every definition.yml as written"; else fail "PyYAML reads the catalogue"; fi
# Names YAML 1.1 reads as booleans or null (service Yes, rpc on, errors no/null/off) come back
# as strings; a schema without services lists none (not null).
mkdir -p "$work/yamlish" "$work/empty-schema"
printf 'package p\nmessage M { 1 x: string }\nservice Yes {\n  auth none\n  rpc on(M) -> M {\n    POST "/v1/on"\n    error 404 no\n    error 409 null\n    error 410 off\n  }\n}\n' >"$work/yamlish/s.sb"
printf 'package q\nmessage M { 1 x: string }\n' >"$work/empty-schema/s.sb"
if "$bin" export-catalogue "$work/yamlish" --output "$work/yamlish-out" >/dev/null 2>&1 && "$bin" export-catalogue "$work/empty-schema" --output "$work/empty-out" >/dev/null 2>&1 \
   && python3 - "$work/yamlish-out" "$work/empty-out" <<'PY'
import sys, yaml
index = yaml.safe_load(open(f"{sys.argv[1]}/services.yml"))
service = index["services"][0]
assert service["spec"] == "p.Yes" and service["folder"] == "yes", service
definition = yaml.safe_load(open(f"{sys.argv[1]}/yes/definition.yml"))
endpoint = definition["endpoints"][0]
assert endpoint["spec"] == "on" and endpoint["folder"] == "on", endpoint
assert [error["name"] for error in endpoint["errors"]] == ["no", "null", "off"], endpoint["errors"]
assert yaml.safe_load(open(f"{sys.argv[2]}/services.yml"))["services"] == [], "no services is an empty list"
PY
then pass "names YAML would read as booleans or null are quoted; no services is []"; else fail "names YAML would read as booleans or null are quoted"; fi

# The catalogue folder the provider serves and the consumer writes into.
catalogue="$work/catalogue"
start_provider() {
  "$demo" provider "$catalogue" "$work/served.log" >>"$work/provider.log" 2>&1 &
  provider_pid=$!
}

start_provider
"$demo" consumer "$catalogue" 1000 "$work/results.txt" >"$work/consumer.log" 2>&1 &
consumer_pid=$!
kills=0
for delay in 0.25 0.15 0.2 0.3 0.15 0.2 0.25 0.15; do
  sleep "$delay"
  kill -0 "$consumer_pid" 2>/dev/null || break
  kill -9 "$provider_pid"; wait "$provider_pid" 2>/dev/null || true
  kills=$((kills + 1))
  start_provider
done
for _ in $(seq 1 1200); do kill -0 "$consumer_pid" 2>/dev/null || break; sleep 0.1; done
# Still running after two minutes: a hang, which must fail here rather than wait for ever.
if kill -0 "$consumer_pid" 2>/dev/null; then kill -9 "$consumer_pid"; fi
if wait "$consumer_pid"; then pass "the consumer finished ($kills provider kills)"; else fail "the consumer did not finish"; cat "$work/consumer.log"; fi
[ "$kills" -ge 3 ] || fail "the provider was killed only $kills times while the consumer ran"
consumer_pid=""
kill -9 "$provider_pid" 2>/dev/null; wait "$provider_pid" 2>/dev/null || true
provider_pid=""

if python3 - "$work" "$kills" <<'PY'
import collections, glob, json, sys
work, kills = sys.argv[1], int(sys.argv[2])
lines = [l.split() for l in open(f"{work}/results.txt") if l.strip()]
numbers = [int(l[0]) for l in lines]
assert sorted(numbers) == list(range(1000)), f"{len(numbers)} answers, {len(set(numbers))} distinct"
failed = [l for l in lines if l[1] not in ("ok", "interrupted")]
assert not failed, failed[:3]
for l in lines:
    if l[1] == "ok":
        assert l[2] == f"aci-{l[0]}", l
served = collections.Counter(int(l) for l in open(f"{work}/served.log") if l.strip())
twice = [n for n, c in served.items() if c > 1]
assert not twice, f"served twice: {twice[:5]}"
ok = {int(l[0]) for l in lines if l[1] == "ok"}
assert ok <= set(served), "an answered request was never served"
interrupted = [l for l in lines if l[1] == "interrupted"]
# Only what was in hand at a kill: at most the provider's concurrency (8) per kill.
assert len(interrupted) <= 8 * kills, f"{len(interrupted)} interrupted after {kills} kills"
folder = f"{work}/catalogue/usernames/look_up_username_hash/consumer.demo"
responses = glob.glob(f"{folder}/*.response.json") + glob.glob(f"{folder}/.archive/*.response.json")
assert len(responses) == 1000, f"{len(responses)} response documents"
for path in responses:
    json.load(open(path))  # every document whole
answered = {p.split("/")[-1].split(".")[0] for p in responses}
# Nothing waits unanswered; a claim the last kill cut short before its marking has its answer.
left = glob.glob(f"{folder}/*.request.json") + [p for p in glob.glob(f"{folder}/*.claimed.json") if p.split("/")[-1].split(".")[0] not in answered]
assert not left, left[:3]
print(f"  ok   1000 requests, each answered once ({len(ok)} served, {len(interrupted)} interrupted by {kills} kills), none served twice")
PY
then :; else fail "exactly one response per request, none served twice"; fi

# A consumer killed mid-stream: every document it left is whole, and the provider answers all.
# A fresh catalogue folder: step 2's 1,000 answered requests must not count for this one.
catalogue="$work/catalogue2"
"$bin" export-catalogue schema --output "$catalogue" >/dev/null 2>&1
rm -f "$work/served.log"
start_provider
"$demo" consumer "$catalogue" 5000 "$work/results2.txt" 5000 >/dev/null 2>&1 &
consumer_pid=$!
# Killed once some answers are in, while many requests are still on their way.
for _ in $(seq 1 200); do [ -f "$work/results2.txt" ] && [ "$(wc -l <"$work/results2.txt")" -ge 50 ] && break; sleep 0.02; done
kill -9 "$consumer_pid" 2>/dev/null || true
wait "$consumer_pid" 2>/dev/null || true
consumer_pid=""
answered=$(wc -l <"$work/results2.txt" 2>/dev/null || echo 0)
# Some answered (it ran) and not all (it was killed mid-stream).
if [ "$answered" -ge 1 ] && [ "$answered" -lt 5000 ]; then pass "a consumer killed mid-stream ($answered of 5000 answered)"
else fail "a consumer killed mid-stream: $answered of 5000 answered (none means it never ran, all that it was not killed)"; fi
# The provider answers what the consumer left behind.
folder="$catalogue/usernames/look_up_username_hash/consumer.demo"
# (fsync on a disk a build has just filled can take seconds)
# (`ls` of a glob would fail when a file it names is claimed in between: find does not)
for _ in $(seq 1 1500); do [ -z "$(find "$folder" -maxdepth 1 -name '*.request.json' -print -quit)" ] && break; sleep 0.02; done
kill -9 "$provider_pid"; wait "$provider_pid" 2>/dev/null || true
provider_pid=""
if python3 - "$catalogue" "$answered" <<'PY'
import glob, json, os, sys
folder, answered_lines = f"{sys.argv[1]}/usernames/look_up_username_hash/consumer.demo", int(sys.argv[2])
requests = glob.glob(f"{folder}/*.request.json") + glob.glob(f"{folder}/*.served.json") + glob.glob(f"{folder}/*.claimed.json")
for path in requests + glob.glob(f"{folder}/*.response.json") + glob.glob(f"{folder}/.archive/*"):
    json.load(open(path))
pending = glob.glob(f"{folder}/*.request.json")
assert not pending, f"{len(pending)} requests left unanswered"
def ids(*patterns):
    return {os.path.basename(p).split(".")[0] for pattern in patterns for p in glob.glob(f"{folder}/{pattern}")}
# Every request this consumer submitted (this folder holds only this step's), where it stands.
submitted = ids("*.request.json", "*.claimed.json", "*.served.json", ".archive/*.served.json", "*.withdrawn.json")
responded = ids("*.response.json", ".archive/*.response.json")
assert submitted, "no request documents at all: the consumer wrote nothing"
assert responded <= submitted, f"{len(responded - submitted)} responses to no request: {sorted(responded - submitted)[:3]}"
# Unanswered only if claimed and in hand when the provider was stopped: at most its concurrency (8).
unanswered = submitted - responded
in_hand = ids("*.claimed.json")
assert unanswered <= in_hand, f"{len(unanswered - in_hand)} requests neither answered nor in hand: {sorted(unanswered - in_hand)[:3]}"
assert len(unanswered) <= 8, f"{len(unanswered)} claimed requests unanswered; the provider serves at most 8 at once"
# Each answer the consumer logged came from a response document of this folder.
assert len(responded) >= answered_lines, f"{answered_lines} answers logged, {len(responded)} response documents"
print(f"  ok   a killed consumer left only whole documents: {len(submitted)} requests, {len(responded)} answered, {len(unanswered)} in hand at the stop")
PY
then :; else fail "a killed consumer leaves whole documents, all answered"; fi

if [ "$failures" -gt 0 ]; then echo "file-drop tests: $failures failed"; exit 1; fi
echo "file-drop tests: all passed"
