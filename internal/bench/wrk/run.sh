#!/usr/bin/env bash
# External load: the real binary, wrk in another process, over HTTP.
# usage: run.sh BINARY sqlite|postgres SECONDS
set -euo pipefail
bin=$1; store=$2; dur=${3:-20}
port=3999; dir=$(mktemp -d); export KEY=hk_bench_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_ext" -c "CREATE DATABASE herald_ext" >/dev/null
  export HERALD_DATABASE_URL='postgres://postgres@127.0.0.1:5432/herald_ext?sslmode=disable'
fi
HERALD_API_KEY=$KEY HERALD_DATA_DIR=$dir "$bin" serve --addr 127.0.0.1:$port >"$dir/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
curl -sf -X POST http://127.0.0.1:$port/v2/workflows -H "Authorization: ApiKey $KEY" -H 'Content-Type: application/json' -d '{"name":"Shipped","steps":[{"name":"inbox","type":"in_app","controlValues":{"subject":"Hi {{ subscriber.firstName | default: \"there\" }}","body":"Order {{ payload.order }} ({{ payload.items | size }} items) shipped on {{ payload.when | date: \"%b %d\" }}","primaryAction":{"label":"Track","redirect":{"url":"/orders/{{ payload.order }}"}}}}]}' >/dev/null
start=$(date +%s.%N)
wrk -t2 -c16 -d${dur}s -s "$(dirname "$0")/trigger.lua" --latency http://127.0.0.1:$port/v1/events/trigger > "$dir/wrk.txt"
sent=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
count() {
  if [ "$store" = postgres ]; then psql -qtA -h 127.0.0.1 -U postgres herald_ext -c "SELECT count(*) FROM messages"
  else python3 -c "import sqlite3;print(sqlite3.connect('file:$dir/herald.db?mode=ro',uri=True).execute('select count(*) from messages').fetchone()[0])"; fi
}
for _ in $(seq 600); do [ "$(count)" -ge "$sent" ] && break; sleep 0.2; done
done_at=$(date +%s.%N)
msgs=$(count)
rss=$(ps -o rss= -p $pid)
printf '%s %s: %s triggers/s (p50 %s, p99 %s, non-2xx %s), %s messages in %.1f s = %.0f msgs/s, RSS %d MB\n' \
  "$(basename "$bin")" "$store" "$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")" \
  "$(awk '$1=="50%" {print $2}' "$dir/wrk.txt")" "$(awk '$1=="99%" {print $2}' "$dir/wrk.txt")" \
  "$(awk '/Non-2xx/ {print $5}' "$dir/wrk.txt" | grep . || echo 0)" "$msgs" "$(echo "$done_at - $start" | bc)" \
  "$(echo "$msgs / ($done_at - $start)" | bc -l)" $((rss/1024))
