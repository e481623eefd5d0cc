#!/usr/bin/env bash
# Feed reads from outside: the real binary, 30 messages for one subscriber,
# then wrk in another process reading that subscriber's first page (10 items)
# over 4 connections; prints reads/s, p50/p99 and the server's CPU per read
# (utime+stime of the server process over the reads / reads).
# usage: run.sh BINARY sqlite|postgres SECONDS
set -euo pipefail
bin=$1; store=$2; dur=${3:-10}
port=${PORT:-3990}; dir=$(mktemp -d); KEY=hk_bench_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_feed" -c "CREATE DATABASE herald_feed" >/dev/null
  export HERALD_DATABASE_URL='postgres://postgres@127.0.0.1:5432/herald_feed?sslmode=disable'
fi
HERALD_API_KEY=$KEY HERALD_DATA_DIR=$dir "$bin" serve --addr 127.0.0.1:$port --log-level warn >"$dir/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
curl -sf -X POST http://127.0.0.1:$port/v2/workflows -H "Authorization: ApiKey $KEY" -H 'Content-Type: application/json' \
  -d '{"name":"Shipped","steps":[{"name":"inbox","type":"in_app","controlValues":{"subject":"Hi {{ subscriber.firstName | default: \"there\" }}","body":"Order {{ payload.order }} ({{ payload.items | size }} items) shipped","primaryAction":{"label":"Track","redirect":{"url":"/orders/{{ payload.order }}"}}}}]}' >/dev/null
for i in $(seq 30); do
  curl -sf -X POST http://127.0.0.1:$port/v1/events/trigger -H "Authorization: ApiKey $KEY" -H 'Content-Type: application/json' \
    -d "{\"name\":\"shipped\",\"to\":\"s1\",\"payload\":{\"order\":\"A-$i\",\"items\":[1,2]}}" >/dev/null
done
sleep 1
printf 'wrk.headers["Authorization"] = "ApiKey %s"\n' "$KEY" > "$dir/feed.lua"
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
wrk -t2 -c4 -d"${dur}s" -s "$dir/feed.lua" --latency "http://127.0.0.1:$port/v1/subscribers/s1/notifications/feed?limit=10" > "$dir/wrk.txt"
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
n=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
non2xx=$(awk '/Non-2xx/ {print $5}' "$dir/wrk.txt" | grep . || echo 0)
printf '%s %s: %s reads/s, p50 %s, p99 %s, non-2xx %s, server CPU %.0f µs a read\n' "$(basename "$bin")" "$store" \
  "$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")" "$(awk '$1=="50%" {print $2}' "$dir/wrk.txt")" \
  "$(awk '$1=="99%" {print $2}' "$dir/wrk.txt")" "$non2xx" "$(echo "($t1 - $t0) * 1000000 / $(getconf CLK_TCK) / $n" | bc -l)"
