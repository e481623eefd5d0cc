#!/usr/bin/env bash
# Fan-out from outside: the real binary, a trigger to one topic of N members
# over HTTP, and the time until every member's in-app message is stored.
# usage: run.sh BINARY sqlite|postgres N
# Prints the subscription load rate (POST /v2/topics/{key}/subscriptions, 100 a
# call, 4 clients), the trigger request's latency, the time until all N
# messages exist, and the rate, with the raw SQL insert rate of the same rows
# (notifications, jobs, details, messages) measured on the same store as a baseline.
set -euo pipefail
bin=$1; store=$2; n=${3:-100000}
here=$(cd "$(dirname "$0")" && pwd)
port=3998; dir=$(mktemp -d); export KEY=hk_bench_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_fanout" -c "CREATE DATABASE herald_fanout" >/dev/null
  export HERALD_DATABASE_URL='postgres://postgres@127.0.0.1:5432/herald_fanout?sslmode=disable'
fi
export HERALD_API_KEY=$KEY HERALD_DATA_DIR=$dir
start_server() {
  "$bin" serve --addr 127.0.0.1:$port ${HERALD_BENCH_SERVE_FLAGS:-} >>"$dir/out.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
}
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
start_server # the first start makes the environments with $KEY
kill $pid; wait $pid || true
"$bin" seed --subscribers "$n" >"$dir/seed.log" 2>&1
start_server
api() { curl -sf -X "$1" "http://127.0.0.1:$port$2" -H "Authorization: ApiKey $KEY" -H 'Content-Type: application/json' -d "$3"; }
api POST /v2/workflows '{"name":"Announce","workflowId":"announce","steps":[{"name":"inbox","type":"in_app","controlValues":{"subject":"Hi {{ subscriber.firstName }}","body":"{{ payload.text }}"}}]}' >/dev/null

t0=$(date +%s.%N)
python3 "$here/subscribe.py" "http://127.0.0.1:$port" "$KEY" everyone "$n"
t1=$(date +%s.%N)

count() {
  if [ "$store" = postgres ]; then psql -qtA -h 127.0.0.1 -U postgres herald_fanout -c "SELECT count(*) FROM messages"
  else python3 -c "import sqlite3;print(sqlite3.connect('file:$dir/herald.db?mode=ro',uri=True).execute('select count(*) from messages').fetchone()[0])"; fi
}
start=$(date +%s.%N)
latency=$(curl -sf -o "$dir/trigger.json" -w '%{time_total}' -X POST "http://127.0.0.1:$port/v1/events/trigger" \
  -H "Authorization: ApiKey $KEY" -H 'Content-Type: application/json' \
  -d '{"name":"announce","to":[{"type":"Topic","topicKey":"everyone"}],"payload":{"text":"Maintenance tonight"}}')
for _ in $(seq 3000); do [ "$(count)" -ge "$n" ] && break; sleep 0.2; done
done_at=$(date +%s.%N)
msgs=$(count)
rss=$(ps -o rss= -p $pid)
kill $pid; wait $pid || true
if [ "$store" = postgres ]; then raw=$(python3 "$here/baseline.py" postgres herald_fanout)
else raw=$(python3 "$here/baseline.py" sqlite "$dir/herald.db"); fi
took=$(echo "$done_at - $start" | bc)
printf '%s %s: %d members subscribed in %.1f s; trigger answered in %.1f ms; %s messages in %.1f s = %.0f msgs/s; RSS %d MB;' \
  "$(basename "$bin")" "$store" "$n" "$(echo "$t1 - $t0" | bc)" "$(echo "$latency * 1000" | bc)" "$msgs" \
  "$took" "$(echo "$msgs / $took" | bc -l)" $((rss/1024))
printf ' raw SQL baseline (the same rows, bulk INSERT … SELECT): %.1f s, ratio %.1f\n' "$raw" "$(echo "$took / $raw" | bc -l)"
