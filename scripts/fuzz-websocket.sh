#!/usr/bin/env bash
# The WebSocket core's fuzzer; kept for its name: scripts/fuzz.sh websocket [seconds].
exec "$(dirname "$0")/fuzz.sh" websocket "$@"
