# Shared by the scripts: one set of build flags, so every step reuses one build.
# -warnings-as-errors holds the runtime, the generator and the generated SDKs to
# "compiles warning-free under Swift 6".
SWIFT_BUILD_FLAGS=(-Xswiftc -warnings-as-errors)
switchboard_bin() {
  swift build "${SWIFT_BUILD_FLAGS[@]}" --product switchboard >/dev/null
  echo "$(swift build "${SWIFT_BUILD_FLAGS[@]}" --show-bin-path)/switchboard"
}
