#!/usr/bin/env bash
# API reference without a dependency: the compiler's symbol graphs (swift package
# dump-symbol-graph) converted by the toolchain's docc into one .doccarchive per library a
# consumer uses. Also fails when a public symbol declared in those libraries' sources has no
# doc comment (a witness documented by its protocol's requirement counts as documented).
#   scripts/docs.sh [--output <dir>]        default: .build/docs
# Preview one with: docc preview --additional-symbol-graph-dir <its symbol graphs> ...
# or serve the archive's folder with any static web server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
output="$root/.build/docs"
[ "${1:-}" = "--output" ] && output=$2
modules=(SwitchboardRuntime SwitchboardIO SwitchboardWebSocket SwitchboardHTTP2 SwitchboardGRPC SwitchboardChat SwitchboardSession SwitchboardBridge SwitchboardCatalogue)
version=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md | head -1)

source scripts/common.sh
# The same flags as the test build, so both share one build instead of rebuilding each other.
mkdir -p "$output"
swift package "${SWIFT_BUILD_FLAGS[@]}" dump-symbol-graph --minimum-access-level public >"$output/build.log" 2>&1 \
  || { tail -n 30 "$output/build.log"; exit 1; }
graphs="$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/../symbolgraph"
[ -d "$graphs" ] || graphs=$(dirname "$(find .build -name 'SwitchboardRuntime.symbols.json' -path '*symbolgraph*' | head -1)")
mkdir -p "$output"
failures=0
for module in "${modules[@]}"; do
  scratch=$(mktemp -d)
  cp "$graphs/$module.symbols.json" "$scratch/"
  cp "$graphs/$module"@*.symbols.json "$scratch/" 2>/dev/null || true
  if docc convert --additional-symbol-graph-dir "$scratch" --fallback-display-name "$module" \
       --fallback-bundle-identifier "org.switchboard.$module" --fallback-bundle-version "$version" \
       --output-path "$output/$module.doccarchive" --warnings-as-errors >"$scratch/docc.log" 2>&1; then
    echo "  ok   $module.doccarchive"
  else
    echo "  FAIL docc $module:"; grep -E "warning|error" "$scratch/docc.log" | head -20; failures=$((failures + 1))
  fi
  rm -rf "$scratch"
done

# Every public symbol of these libraries' own sources carries a doc comment.
if ! python3 - "$graphs" "$root/Sources" "${modules[@]}" <<'PY'
import glob, json, os, sys
graphs, sources, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
missing = []
for module in modules:
    for path in glob.glob(os.path.join(graphs, f"{module}*.symbols.json")):
        for symbol in json.load(open(path, encoding="utf-8"))["symbols"]:
            uri = symbol.get("location", {}).get("uri", "")
            if not uri.startswith("file://" + sources) or "/Generated/" in uri:
                continue
            if symbol["accessLevel"] not in ("public", "open") or symbol.get("docComment") or symbol.get("sourceOrigin"):
                continue
            line = symbol["location"]["position"]["line"] + 1
            missing.append(f"{os.path.relpath(uri[7:])}:{line}: {'.'.join(symbol['pathComponents'])}")
for entry in sorted(set(missing)):
    print(f"  undocumented: {entry}")
sys.exit(1 if missing else 0)
PY
then failures=$((failures + 1)); fi
[ "$failures" -eq 0 ] && echo "docs: every public symbol documented; archives in $output" || { echo "docs: $failures failed"; exit 1; }
