#!/usr/bin/env bash
# Runs protobuf's official conformance runner against the generated proto3 messages.
#
# The runner (conformance/conformance_test_runner, C++) is built from the source release of
# the system's own libprotobuf-dev (Debian's pool has its tarball) and linked against that
# library; it is cached in .build-conformance/<version>. It drives Tests/ConformanceTestee,
# which answers with the generated TestAllTypesProto3 and the runtime's binary and JSON codecs.
# Every required and recommended binary and JSON test of proto3 messages must pass; proto2
# messages, JSPB and text format are answered "skipped" (the schema language is proto3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/common.sh

version=$(dpkg-query -W -f='${Version}' libprotobuf-dev 2>/dev/null | sed 's/-[^-]*$//; s/^[0-9]*://')
[ -n "$version" ] || { echo "conformance: libprotobuf-dev is not installed (scripts/setup.sh installs it)"; exit 1; }
cache="$root/.build-conformance/$version"
runner="$cache/conformance_test_runner"
if [ ! -x "$runner" ]; then
  mkdir -p "$cache"
  tarball="$cache/protobuf_$version.orig.tar.gz"
  if [ ! -s "$tarball" ]; then
    # Straight from Debian's pool; failing that, through apt (its mirror and proxy settings)
    # with a source list and lists directory of its own, so the system's stay as they are.
    url="${SWITCHBOARD_DEBIAN_POOL:-https://deb.debian.org/debian/pool/main}/p/protobuf/protobuf_$version.orig.tar.gz"
    if ! python3 - "$url" "$tarball.part" 2>/dev/null <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=120) as response, open(sys.argv[2], "wb") as out:
    out.write(response.read())
PY
    then
      echo "conformance: $url unreachable; fetching the source through apt"
      sudo=""
      [ "$(id -u)" -ne 0 ] && sudo="sudo"
      codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
      mirror=$(grep -rhE "^(URIs:|deb )" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE "https?://[^ ]+/debian/?" | sed -n 1p || true)
      list="$cache/sources.list"
      echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror:-http://deb.debian.org/debian} $codename main" > "$list"
      # Its own lists directory too: an update of one list would otherwise drop the system's.
      mkdir -p "$cache/apt-lists/partial"
      apt_options=(-o "Dir::Etc::SourceList=$list" -o "Dir::Etc::SourceParts=-" -o "Dir::State::Lists=$cache/apt-lists")
      $sudo apt-get "${apt_options[@]}" update -qq
      (cd "$cache" && apt-get "${apt_options[@]}" source --download-only -qq "protobuf=$(dpkg-query -W -f='${Version}' libprotobuf-dev)")
      cp "$cache/protobuf_$version.orig.tar.gz" "$tarball.part" 2>/dev/null || true
    fi
    mv "$tarball.part" "$tarball"
  fi
  source_dir="$cache/protobuf-$version"
  rm -rf "$source_dir" "$cache/gen"
  tar -xzf "$tarball" -C "$cache" "protobuf-$version/conformance" "protobuf-$version/src/google/protobuf"
  mkdir -p "$cache/gen"
  protoc -I"$source_dir/src" -I"$source_dir/conformance" --cpp_out="$cache/gen" "$source_dir/conformance/conformance.proto" \
    "$source_dir/src/google/protobuf/test_messages_proto3.proto" "$source_dir/src/google/protobuf/test_messages_proto2.proto"
  echo "conformance: building protobuf $version's conformance_test_runner (about a minute, once)"
  # The source tree's headers (same release as the library) add the internal ones the
  # runner includes and libprotobuf-dev does not install.
  (cd "$source_dir/conformance" && g++ -std=c++17 -O1 -w -I. -I"$cache/gen" -I../src -o "$runner.part" \
     conformance_test_main.cc conformance_test.cc conformance_test_runner.cc binary_json_conformance_suite.cc \
     text_format_conformance_suite.cc third_party/jsoncpp/jsoncpp.cpp "$cache/gen/conformance.pb.cc" \
     "$cache/gen/google/protobuf/test_messages_proto3.pb.cc" "$cache/gen/google/protobuf/test_messages_proto2.pb.cc" \
     -lprotobuf -lpthread)
  mv "$runner.part" "$runner"
fi

swift build "${SWIFT_BUILD_FLAGS[@]}" --product conformance-testee >/dev/null
testee="$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/conformance-testee"
failed=0
# The generated codecs, then the dynamic ones (`call`, `mock-server`) reading the same schema.
for codecs in generated dynamic; do
  schema=""
  [ "$codecs" = dynamic ] && schema="$root/Tests/Schemas/test_messages_proto3"
  output=$(cd "$cache" && SWITCHBOARD_CONFORMANCE_SCHEMA="$schema" "$runner" --enforce_recommended "$testee" 2>&1) || true
  # The first suite is binary and JSON; the second (text format) is skipped by the testee.
  summary=$(grep -m1 "^CONFORMANCE SUITE" <<<"$output" || true)
  echo "conformance, $codecs codecs (protobuf $version, binary and JSON, required and recommended): ${summary:-no summary}"
  successes=$(sed -n 's/.*: \([0-9]*\) successes.*/\1/p' <<<"$summary")
  if [[ "$summary" != "CONFORMANCE SUITE PASSED"* ]] || [[ "$summary" != *" 0 unexpected failures"* ]] || [ "${successes:-0}" -lt 1300 ]; then
    grep -E "^ERROR|^  (Required|Recommended)\." <<<"$output" | head -40
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then echo "conformance: FAILED"; exit 1; fi
