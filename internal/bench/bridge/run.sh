#!/usr/bin/env bash
# Code-first workflows from outside: `herald serve` on a fresh store, a
# bridge in another process (fakebridge: one in-app step, each execute
# answered after DELAY, signatures checked), synced with POST /v1/bridge/sync,
# then `herald bench --workflow bench-bridge` over HTTP; and, side by side,
# `herald bench` of the same one-step in-app workflow made through the API
# (internal/bench/load/run.sh) on another fresh store. Every message is
# checked delivered exactly once; a wrong answer fails the script.
# usage: run.sh BINARY sqlite|postgres SECONDS [DELAY]
set -euo pipefail
bin=$1; store=$2; dur=${3:-15}; delay=${4:-50ms}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
export HERALD_API_KEY=hk_load_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
serve_env=(HERALD_DATA_DIR="$dir/serve" HERALD_ALLOW_PRIVATE_NETWORKS=true)
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_bridge" -c "CREATE DATABASE herald_bridge" >/dev/null
  serve_env+=(HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:5432/herald_bridge?sslmode=disable")
fi
(cd "$here/../../.." && go build -o "$dir/fakebridge" ./internal/bench/bridge/fakebridge)
"$dir/fakebridge" -key "$HERALD_API_KEY" -delay "$delay" >"$dir/bridge.url" 2>"$dir/bridge.log" &
bpid=$!
env "${serve_env[@]}" "$bin" serve --addr 127.0.0.1:$port --log-level warn >"$dir/serve.log" 2>&1 &
pid=$!
trap 'kill $pid $bpid 2>/dev/null; wait $pid $bpid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && [ -s "$dir/bridge.url" ] && break; sleep 0.1; done
bridge=$(head -1 "$dir/bridge.url")
curl -sf -X POST "http://127.0.0.1:$port/v1/bridge/sync?source=cli" -H "Authorization: ApiKey $HERALD_API_KEY" \
  -H 'Content-Type: application/json' -d "{\"bridgeUrl\":\"$bridge\"}" >/dev/null || { cat "$dir/serve.log"; exit 1; }
rate() { awk -F'  +' '$1 == "delivered messages/s" {print $2}'; }
code=$("$bin" bench --url http://127.0.0.1:$port --duration "${dur}s" --workflow bench-bridge --probes 0 --feed-duration 1s \
  --pid $pid | tee "$dir/bench.txt" | rate)
kill $pid $bpid; wait $pid $bpid 2>/dev/null || true; trap - EXIT
made=$(NO_BASELINE=1 LOAD_FLAGS="--probes 0 --feed-duration 1s" "$here/../load/run.sh" "$bin" "$store" "$dur" | rate)
grep -E "VmHWM|trigger answer" "$dir/bench.txt" || true
printf '%s: code-first (bridge answering in %s) %s msgs/s, made through the API %s msgs/s: code-first/API = %.2f\n' \
  "$store" "$delay" "$code" "$made" "$(echo "${code//,/} / ${made//,/}" | bc -l)"
