#!/usr/bin/env bash
# Webhook fan-out from outside: `herald bench` against `herald serve` on a
# fresh store, twice — without a webhook endpoint, then with one endpoint
# taking message.sent at a fast local receiver (receiver/, another process) —
# and the triggers/s of each. During the second run the attempts queue is
# read from /metrics every second (herald_webhook_attempts_due, the attempts
# due and not yet claimed, and herald_webhook_oldest_due_seconds); after it,
# the script waits until the receiver holds one message.sent for every
# in-app message delivered, and says how long that took after the last
# trigger. A missing event fails the script.
# usage: run.sh BINARY sqlite|postgres SECONDS
#   ROUNDS: pairs of runs, alternated (default 1): on a shared machine the pairs show the noise
#   LOAD_FLAGS: flags of `herald bench`, e.g. "--clients 16" (default: "--probes 0 --feed-duration 1s")
#   DELAY: with postgres, put the database behind ../shared/tools/latproxy delaying every byte by DELAY
#     each way (e.g. 1ms): the outbox's statements then cost round trips as in production
set -euo pipefail
bin=$1; store=$2; dur=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
export HERALD_API_KEY=hk_load_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
flags=${LOAD_FLAGS:-"--probes 0 --feed-duration 1s"}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
(cd "$here/../../.." && go build -o "$dir/receiver" ./internal/bench/webhooks/receiver)
"$dir/receiver" >"$dir/receiver.url" 2>"$dir/receiver.log" &
rpid=$!
pid=
trap 'kill $rpid $pid 2>/dev/null; wait $rpid $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$dir/receiver.url" ] && break; sleep 0.1; done
receiver=$(head -1 "$dir/receiver.url")

dbport=5432
if [ -n "${DELAY:-}" ]; then
  [ "$store" = postgres ] || { echo "DELAY needs postgres"; exit 2; }
  tools=${LATPROXY_DIR:-$here/../../../../shared/tools/latproxy}
  go build -o "$dir/latproxy" "$tools/main.go"
  dbport=$(free_port)
  "$dir/latproxy" -listen 127.0.0.1:$dbport -upstream 127.0.0.1:5432 -delay "$DELAY" >"$dir/proxy.log" 2>&1 &
  ppid=$!
  trap 'kill $rpid $pid $ppid 2>/dev/null; wait $rpid $pid $ppid 2>/dev/null || true' EXIT
  for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$dbport) 2>/dev/null && break; sleep 0.1; done
fi

received() { curl -sf "$receiver/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["byType"].get("message.sent", 0))'; }
# run NAME HOOK: one `herald bench` on a fresh store; HOOK=1 creates the endpoint first.
run() {
  local name=$1 hook=$2 port; port=$(free_port)
  : >"$dir/queue.txt"; : >"$dir/drain.txt"
  local serve_env=(HERALD_DATA_DIR="$dir/$name" HERALD_ALLOW_PRIVATE_NETWORKS=true)
  if [ "$store" = postgres ]; then
    psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_webhooks" -c "CREATE DATABASE herald_webhooks" >/dev/null
    serve_env+=(HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:$dbport/herald_webhooks?sslmode=disable")
  fi
  env "${serve_env[@]}" "$bin" serve --addr 127.0.0.1:$port --log-level warn >"$dir/$name.serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
  kill -0 $pid 2>/dev/null || { cat "$dir/$name.serve.log"; exit 1; }
  if [ "$hook" = 1 ]; then
    base=$(received)
    curl -sf -X POST http://127.0.0.1:$port/v2/webhooks/endpoints -H "Authorization: ApiKey $HERALD_API_KEY" \
      -H 'Content-Type: application/json' -d "{\"url\":\"$receiver/hook\",\"eventTypes\":[\"message.sent\"]}" >/dev/null
    # The queue, every second, while the bench runs.
    (while kill -0 $pid 2>/dev/null; do
       curl -sf http://127.0.0.1:$port/metrics | awk -v t="$(date +%s)" \
         '$1 == "herald_webhook_attempts_due" {d=$2} $1 == "herald_webhook_oldest_due_seconds" {a=$2} END {print t, d, a}'
       sleep 1
     done) >"$dir/queue.txt" 2>/dev/null &
  fi
  # shellcheck disable=SC2086 # flags is a list of flags
  "$bin" bench --url http://127.0.0.1:$port --duration "${dur}s" --pid $pid $flags >"$dir/$name.txt"
  ended=$(date +%s.%N)
  if [ "$hook" = 1 ]; then
    delivered=$(awk -F'  +' '$1 == "messages delivered" {split($2, n, " "); print n[1]}' "$dir/$name.txt")
    got=0
    for _ in $(seq 600); do
      got=$(( $(received) - base ))
      echo "$(date +%s.%N) $got" >>"$dir/drain.txt"
      [ "$got" -ge "$delivered" ] && break
      sleep 0.1
    done
    drained=$(echo "$(date +%s.%N) - $ended" | bc -l)
    [ "$got" -ge "$delivered" ] || { echo "the receiver got $got message.sent events of $delivered messages"; exit 1; }
  fi
  kill $pid; wait $pid 2>/dev/null || true; pid=
}

rate() { awk -F'  +' -v k="$2" '$1 == k {print $2}' "$dir/$1.txt"; }
for round in $(seq "${ROUNDS:-1}"); do
  run "plain$round" 0
  run "hooked$round" 1
  if [ "$round" = 1 ]; then
    cat "$dir/hooked1.txt"; echo
    echo "attempts queue while the bench ran (unix time, due and unclaimed, oldest due s):"; cat "$dir/queue.txt"
    echo "message.sent received after the bench (unix time, count):"; cat "$dir/drain.txt"
  fi
  maxdue=$(awk 'NF == 3 && $2 > m {m = $2} END {print m + 0}' "$dir/queue.txt")
  maxage=$(awk 'NF == 3 && $3 > m {m = $3} END {print m + 0}' "$dir/queue.txt")
  printf '%s round %s: %s triggers/s without an endpoint, %s with one taking message.sent (%s msgs/s delivered);' \
    "$store" "$round" "$(rate "plain$round" 'triggers accepted/s')" "$(rate "hooked$round" 'triggers accepted/s')" \
    "$(rate "hooked$round" 'delivered messages/s')"
  printf ' %s message.sent received; queue at most %s due, oldest %.2f s; all in %.2f s after the last trigger\n' \
    "$got" "$maxdue" "$maxage" "$drained"
done
