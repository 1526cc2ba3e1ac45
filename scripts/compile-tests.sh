#!/usr/bin/env bash
# Type-checks Swift snippets against the built SDK with swiftc:
#   Tests/CompileFail/*.swift   each must fail with its `// EXPECT-ERROR: text`, or
#                               compile when marked `// EXPECT-SUCCESS`;
#   docs/guides/*.md            every ```swift block must compile;
#   SwitchboardIO/TLS/NetworkTLSStream.swift (Apple-only) against Tests/AppleStandIns.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/common.sh
swift build "${SWIFT_BUILD_FLAGS[@]}" --target SwitchboardChat >/dev/null
# The snippets below run the generator with --skip-build: build it here.
swift build "${SWIFT_BUILD_FLAGS[@]}" --product switchboard >/dev/null
modules="$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/Modules"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# Debug builds enable testing, which keeps even internal imports visible to importers, so the
# OpenSSL shim's generated module map must be findable (Linux only; Apple builds have no shim).
clang_modules=()
shim_map="$(dirname "$modules")/CSwitchboardOpenSSL.build/module.modulemap"
[ -f "$shim_map" ] && clang_modules=(-Xcc "-fmodule-map-file=$shim_map" -Xcc "-I$root/Sources/CSwitchboardOpenSSL/include")
io_map="$(dirname "$modules")/CSwitchboardIO.build/module.modulemap"
[ -f "$io_map" ] && clang_modules+=(-Xcc "-fmodule-map-file=$io_map" -Xcc "-I$root/Sources/CSwitchboardIO/include")
typecheck() { swiftc -typecheck -swift-version 6 -I "$modules" "${clang_modules[@]}" "$@" 2>&1; }

echo "compile tests:"
for snippet in Tests/CompileFail/*.swift; do
  name=$(basename "$snippet")
  if grep -q '^// EXPECT-SUCCESS' "$snippet"; then
    if output=$(typecheck "$snippet"); then echo "  ok   $name compiles"; else echo "  FAIL $name should compile:"; echo "$output"; failures=$((failures + 1)); fi
    continue
  fi
  expected=$(sed -n 's#^// EXPECT-ERROR: ##p' "$snippet")
  # Without the text it must fail with, any error at all would pass.
  if [ -z "$expected" ]; then echo "  FAIL $name has neither EXPECT-ERROR nor EXPECT-SUCCESS"; failures=$((failures + 1)); continue; fi
  if output=$(typecheck "$snippet"); then
    echo "  FAIL $name compiled, but must fail with: $expected"; failures=$((failures + 1))
  elif grep -qF "$expected" <<<"$output"; then
    echo "  ok   $name fails with: $expected"
  else
    echo "  FAIL $name failed for another reason:"; echo "$output" | head -5; failures=$((failures + 1))
  fi
done

# The guides use the example app's schema (Examples/RoomsApp), built here into a module of its
# own as its build plugin would build it.
rooms="$work/modules"
mkdir -p "$rooms" "$work/rooms-sdk"
swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard generate Examples/RoomsApp/Sources/RoomsAPI --output "$work/rooms-sdk" \
  --module RoomsAPI --layout per-schema-file >/dev/null
swiftc -emit-module -parse-as-library -swift-version 6 -warnings-as-errors -module-name RoomsAPI -I "$modules" "${clang_modules[@]}" \
  -emit-module-path "$rooms/RoomsAPI.swiftmodule" "$work"/rooms-sdk/*.swift Examples/RoomsApp/Sources/RoomsAPI/*.swift
typecheck() { swiftc -typecheck -swift-version 6 -I "$modules" -I "$rooms" "${clang_modules[@]}" "$@" 2>&1; }

for guide in docs/guides/*.md; do
  name=$(basename "$guide" .md)
  python3 - "$guide" "$work/$name.swift" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
# A package manifest (it starts with its tools version) is not app code.
blocks = [b for b in re.findall(r"```swift\n(.*?)```", text, re.S) if not b.startswith("// swift-tools-version")]
imports = sorted({line for block in blocks for line in block.splitlines() if line.startswith("import ")})
body = "\n".join("\n".join(l for l in block.splitlines() if not l.startswith("import ")) for block in blocks)
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(imports) + "\n\n" + body + "\n")
PY
  if output=$(typecheck -parse-as-library "$work/$name.swift"); then echo "  ok   guide $name compiles"; else echo "  FAIL guide $name:"; echo "$output" | head -20; failures=$((failures + 1)); fi
done

# A schema whose types take every name the runtime declares compiles: they are renamed
# rather than shadowing the runtime types that generated services, clients and mocks name.
# The output folder is API and the module is Collide: nothing may assume the folder's name
# (a nested Tag shadows the top-level one, which must still be reachable).
mkdir -p "$work/collide/schema" "$work/collide/API"
names=$(grep -rhoE "^public (final )?(struct|enum|class|protocol|typealias|actor) [A-Za-z_0-9]+" Sources/SwitchboardRuntime | awk '{print $NF}' | sort -u)
{
  echo "package collide"
  for name in $names; do echo "message $name { 1 value: string }"; done
  echo 'message Tag { 1 name: string }'
  # Swift types generated code names, and oneofs whose enums would hide them inside the message.
  echo 'message Duration { 1 value: string }  message Mirror { @sensitive 1 secret: string }'
  echo 'message CustomReflectable { 1 x: int32 }  message CustomDebugStringConvertible { 1 x: int32 }'
  echo 'message Holder { 1 raw: bytes  2 name: string  oneof data { 3 text: string  4 blob: bytes }  oneof string { 5 s: string  6 n: int32 }  oneof type { 7 t: string  8 u: int32 } }'
  echo 'message Post { message Tag { 1 x: int32 }  1 mine: Tag  2 global: collide.Tag  3 both: [collide.Tag] }'
  echo 'service Collide {'
  echo '  auth none'
  echo '  rpc get(CallOptions) -> RPCResponse { GET "/v1/get/{value}" error 404 notFound(ServerContext) error 429 rateLimited(retryAfter) }'
  echo '  rpc hold(Holder) -> Mirror { POST "/v1/hold" error 409 conflict(Duration) }'
  echo '  rpc post(RPCRequest) -> RequestResult { POST "/v1/post" }'
  echo '  event pushed(EventOutcome) { PUT "/api/v1/pushed" ack afterHandling }'
  echo '}'
} > "$work/collide/schema/collide.sb"
if output=$(swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard generate "$work/collide/schema" --output "$work/collide/API" 2>&1) &&
   output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name Collide -I "$modules" "${clang_modules[@]}" "$work"/collide/API/*.swift 2>&1); then
  echo "  ok   a schema using every runtime type name ($(echo "$names" | wc -w) of them) and shadowing a type compiles in a module not named after its folder"
else
  echo "  FAIL a schema using every runtime type name:"; echo "$output" | head -20; failures=$((failures + 1))
fi

# Names that shadow one another (a oneof named like an enum, a message named like its parent,
# cases that become one keyword, a field named like its rpc) compile, and protoc takes the export.
if output=$(swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard generate Tests/Schemas/name_clashes --output "$work/clashes" 2>&1) &&
   output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name Clashes -I "$modules" "${clang_modules[@]}" "$work"/clashes/*.swift 2>&1) &&
   output=$(swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard export-proto Tests/Schemas/name_clashes --output "$work/clashes.proto" 2>&1) &&
   output=$(protoc -I "$work" --descriptor_set_out=/dev/null "$work/clashes.proto" 2>&1); then
  echo "  ok   a schema whose names shadow one another compiles, and protoc takes its export"
else
  echo "  FAIL a schema whose names shadow one another:"; echo "$output" | head -20; failures=$((failures + 1))
fi

# The build plugin's layout (one file per schema file) holds the same code: it must compile too.
mkdir -p "$work/layout"
# A schema that imports another package: each generated into a module of its own, the importer
# naming the imported types through --import-path; and their exports compile with protoc.
imports="$work/imports"
mkdir -p "$imports/modules" "$imports/proto/acme"
switchboard() { swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard "$@"; }
if output=$(switchboard generate Tests/Schemas/imports/common --output "$imports/common" 2>&1) &&
   output=$(swiftc -emit-module -parse-as-library -swift-version 6 -warnings-as-errors -module-name AcmeCommon -I "$modules" "${clang_modules[@]}" \
              -emit-module-path "$imports/modules/AcmeCommon.swiftmodule" "$imports"/common/*.swift 2>&1) &&
   output=$(switchboard generate Tests/Schemas/imports/app --output "$imports/app" --import-path Tests/Schemas/imports/common=AcmeCommon 2>&1) &&
   output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name AcmeApp -I "$modules" -I "$imports/modules" "${clang_modules[@]}" "$imports"/app/*.swift 2>&1); then
  echo "  ok   a schema importing another package compiles against that package's module"
else
  echo "  FAIL a schema importing another package:"; echo "$output" | head -20; failures=$((failures + 1))
fi
if output=$(switchboard export-proto Tests/Schemas/imports/common --output "$imports/proto/acme/common.proto" 2>&1) &&
   output=$(switchboard export-proto Tests/Schemas/imports/app --import-path Tests/Schemas/imports/common --output "$imports/proto/acme/app.proto" 2>&1) &&
   output=$(protoc -I "$imports/proto" -I /usr/include --descriptor_set_out=/dev/null acme/app.proto 2>&1); then
  echo "  ok   protoc compiles the exports of a schema and the package it imports"
else
  echo "  FAIL exports of importing schemas:"; echo "$output" | head -20; failures=$((failures + 1))
fi

# Names protoc takes (lowercase and underscored types, capitalised oneofs, `_UNKNOWN` cases,
# fields named `_` and `__`) and JSON names with quotes, backslashes, a newline and non-ASCII:
# the SDK compiles, protoc takes the export, and reads each JSON name as the schema wrote it.
protoc_names="$work/protoc-names"
mkdir -p "$protoc_names/proto"
cat > "$protoc_names/check.py" <<'PY'
import sys
from google.protobuf import descriptor_pb2
files = descriptor_pb2.FileDescriptorSet()
with open(sys.argv[1], "rb") as handle:
    files.ParseFromString(handle.read())
found = {}
def walk(messages, prefix):
    for message in messages:
        for field in message.field:
            found[prefix + message.name + "." + field.name] = field.json_name
        walk(message.nested_type, prefix + message.name + ".")
walk(files.file[0].message_type, "")
expected = {
    "chat_message.Text": "Text", "chat_message._": "underscore", "chat_message.__2": "2",
    "chat_message.trailing_": "trailing", "chat_message.quoted": 'q"uo\\te', "chat_message.naive": "na\u00efve",
    "chat_message.control": "line\nbreak", "Holder.__": "inner",
}
wrong = {name: (found.get(name), json) for name, json in expected.items() if found.get(name) != json}
if wrong:
    sys.exit("json_name (protoc's, the schema's) differs: %r" % wrong)
PY
if output=$(switchboard generate Tests/Schemas/protoc_names --output "$protoc_names/swift" 2>&1) &&
   output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name ProtocNames -I "$modules" "${clang_modules[@]}" "$protoc_names"/swift/*.swift 2>&1) &&
   output=$(switchboard export-proto Tests/Schemas/protoc_names --output "$protoc_names/proto/protoc_names.proto" 2>&1) &&
   output=$(protoc -I "$protoc_names/proto" --descriptor_set_out="$protoc_names/protoc_names.pb" protoc_names.proto 2>&1) &&
   output=$(python3 "$protoc_names/check.py" "$protoc_names/protoc_names.pb" 2>&1); then
  echo "  ok   a schema with the names protoc takes compiles, and protoc reads its export's names and JSON names as written"
else
  echo "  FAIL a schema with the names protoc takes:"; echo "$output" | head -20; failures=$((failures + 1))
fi

if output=$(swift run --skip-build "${SWIFT_BUILD_FLAGS[@]}" switchboard generate schema --output "$work/layout" --layout per-schema-file 2>&1) &&
   output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name SignalChat -I "$modules" "${clang_modules[@]}" "$work"/layout/*.swift 2>&1); then
  echo "  ok   the sample schema in the build plugin's layout (one file per schema file) compiles"
else
  echo "  FAIL the sample schema in the build plugin's layout:"; echo "$output" | head -20; failures=$((failures + 1))
fi

# The Apple-only TLS stream cannot be built here; type-check it (Swift 6, warnings as errors)
# against stand-ins with Apple's signatures for the Network and Security calls it makes.
stand_ins="$work/apple"
mkdir -p "$stand_ins"
io=Sources/SwitchboardIO
if output=$(swiftc -swift-version 6 -parse-as-library -emit-module -module-name Security -emit-module-path "$stand_ins/Security.swiftmodule" Tests/AppleStandIns/Security.swift 2>&1 &&
            swiftc -swift-version 6 -parse-as-library -emit-module -module-name Network -I "$stand_ins" -emit-module-path "$stand_ins/Network.swiftmodule" Tests/AppleStandIns/Network.swift 2>&1 &&
            swiftc -typecheck -swift-version 6 -warnings-as-errors -parse-as-library -package-name Switchboard -I "$stand_ins" "$io/TLS/NetworkTLSStream.swift" "$io/TLS/PEMCertificates.swift" \
              "$io/Blocking/LockedState.swift" "$io/AdaptiveLock.swift" "$io/Blocking/ByteStream.swift" "$io/TLS/TLSOptions.swift" "$io/Connections/NetworkError.swift" 2>&1); then
  echo "  ok   Network.framework TLS stream type-checks against Apple stand-ins"
else
  echo "  FAIL Network.framework TLS stream:"; echo "$output" | head -20; failures=$((failures + 1))
fi

# The whole I/O module as Apple platforms build it for TLS: Network.framework present (the
# stand-ins), no OpenSSL shim, so the branches that open and serve TLS through Network (the
# connector's, the pumped channel's) are type-checked too, not only the TLS stream.
# The I/O module imports SwitchboardThreads: its interface first, from its sources.
mkdir -p "$work/threads"
if [ -f "$io_map" ] &&
   output=$(swiftc -emit-module -swift-version 6 -parse-as-library -package-name Switchboard -module-name SwitchboardThreads \
              -emit-module-path "$work/threads/SwitchboardThreads.swiftmodule" Sources/SwitchboardThreads/*.swift 2>&1 &&
            swiftc -typecheck -swift-version 6 -warnings-as-errors -parse-as-library -package-name Switchboard -module-name SwitchboardIO \
              -I "$stand_ins" -I "$work/threads" -Xcc "-fmodule-map-file=$io_map" -Xcc "-I$root/Sources/CSwitchboardIO/include" \
              $(find "$io" -name '*.swift' | sort) 2>&1); then
  echo "  ok   the I/O module type-checks with Network.framework's TLS in place of OpenSSL"
else
  echo "  FAIL the I/O module with Network.framework's TLS:"; echo "${output:-no module map for the I/O shim}" | head -20; failures=$((failures + 1))
fi

# The kqueue selector (Apple platforms) against a stand-in Darwin, with the types it shares.
if output=$(swiftc -typecheck -swift-version 6 -warnings-as-errors -parse-as-library -package-name Switchboard \
              -Xcc "-fmodule-map-file=$root/Tests/AppleStandIns/Darwin/module.modulemap" -Xcc "-I$root/Tests/AppleStandIns/Darwin" \
              "$io/KqueueSelector.swift" "$io/IOInterest.swift" "$io/IOError.swift" "$io/AdaptiveLock.swift" 2>&1); then
  echo "  ok   kqueue selector type-checks against a stand-in Darwin"
else
  echo "  FAIL kqueue selector:"; echo "$output" | head -20; failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then echo "compile tests: $failures failed"; exit 1; fi
echo "compile tests: all passed"
