#!/usr/bin/env bash
# Regenerates the wire-compatibility fixtures from text-format messages, using
# real protobuf implementations that nobody here wrote:
#   protoc (C++)           text format -> binary wire bytes  (Fixtures/binary/*.binpb)
#   Python protobuf        binary      -> canonical JSON     (Fixtures/json/*.json)
#   Python protobuf        hand-written input (Fixtures/input/*.hex) -> what it serializes
#                          back (Fixtures/reserialized/*.binpb)
# The .proto files come from `switchboard export-proto`, so they also check it.
# Fixtures/imports holds the same for a schema that imports another schema's package
# (Tests/Schemas/imports: acme.app uses acme.common's types): both exports, protoc bytes of
# acme.app messages from Fixtures/imports/textproto, Python's JSON of them. No test target
# compiles acme's generated code, so these are read by the dynamic codec and kept out of
# Fixtures/binary, whose every message must have a generated codec.
#
#   scripts/make-fixtures.sh           rewrite the committed fixtures
#   scripts/make-fixtures.sh --check   regenerate into a temp dir and fail if they differ
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$root/Tests/SwitchboardRuntimeTests/Fixtures"
mode=${1:-write}

command -v protoc >/dev/null || { echo "protoc is missing: run scripts/setup.sh" >&2; exit 1; }
python3 -c "import google.protobuf" 2>/dev/null || { echo "Python protobuf is missing: run scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/protos" "$work/binary" "$work/json" "$work/reserialized" \
  "$work/imports/protos/acme" "$work/imports/binary" "$work/imports/json"

cd "$root"
source "$root/scripts/common.sh"
bin=$(switchboard_bin)
"$bin" export-proto schema --output "$work/protos/signal_chat.proto" 2>/dev/null
"$bin" export-proto Tests/Schemas/kitchen_sink --output "$work/protos/kitchen_sink.proto" 2>/dev/null
"$bin" export-proto Tests/Schemas/test_messages_proto3 --output "$work/protos/test_messages_proto3.proto" 2>/dev/null

include=/usr/include
protoc -I "$work/protos" -I "$include" --include_imports \
  --descriptor_set_out="$work/descriptors.pb" signal_chat.proto kitchen_sink.proto test_messages_proto3.proto

for text in "$fixtures"/textproto/*.txtpb; do
  base=$(basename "$text" .txtpb)
  name=${base%%.*}
  message=${base#*.}
  case "$message" in
    signal.chat.*) proto=signal_chat.proto ;;
    switchboard.test.*) proto=kitchen_sink.proto ;;
    protobuf_test_messages.proto3.*) proto=test_messages_proto3.proto ;;
    *) echo "no .proto for $message" >&2; exit 1 ;;
  esac
  protoc --deterministic_output -I "$work/protos" -I "$include" --encode="$message" "$proto" \
    < "$text" > "$work/binary/$base.binpb"
done

python3 "$root/scripts/protobuf_json.py" "$work/descriptors.pb" "$work/binary" "$work/json"
python3 "$root/scripts/protobuf_reserialize.py" "$work/descriptors.pb" "$fixtures/input" "$work/reserialized"

# A package importing another: each export where the other's `import` expects it
# (`acme.common` is acme/common.proto).
imports="$work/imports"
"$bin" export-proto Tests/Schemas/imports/common --output "$imports/protos/acme/common.proto" 2>/dev/null
"$bin" export-proto Tests/Schemas/imports/app --import-path Tests/Schemas/imports/common \
  --output "$imports/protos/acme/app.proto" 2>/dev/null
protoc -I "$imports/protos" -I "$include" --include_imports \
  --descriptor_set_out="$work/imports.pb" acme/app.proto
for text in "$fixtures"/imports/textproto/*.txtpb; do
  base=$(basename "$text" .txtpb)
  message=${base#*.}
  case "$message" in
    acme.app.*) proto=acme/app.proto ;;
    *) echo "no .proto for $message" >&2; exit 1 ;;
  esac
  protoc --deterministic_output -I "$imports/protos" -I "$include" --encode="$message" "$proto" \
    < "$text" > "$imports/binary/$base.binpb"
done
python3 "$root/scripts/protobuf_json.py" "$work/imports.pb" "$imports/binary" "$imports/json"

if [ "$mode" = "--check" ]; then
  status=0
  for kind in protos binary json reserialized imports/protos imports/binary imports/json; do
    diff -r "$work/$kind" "$fixtures/$kind" || status=1
  done
  if [ $status -ne 0 ]; then
    echo "fixtures are stale: run scripts/make-fixtures.sh" >&2
    exit 1
  fi
  echo "fixtures match protoc and Python protobuf"
else
  for kind in protos binary json reserialized imports/protos imports/binary imports/json; do
    rm -rf "${fixtures:?}/$kind"
    cp -r "$work/$kind" "$fixtures/$kind"
  done
  echo "wrote fixtures to $fixtures"
fi
