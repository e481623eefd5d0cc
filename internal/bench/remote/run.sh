#!/usr/bin/env bash
# A database across a network: `herald serve` on PostgreSQL behind latproxy
# (../shared/tools/latproxy), which delays every byte by DELAY each way, and
# `herald bench` in another process; run it with -delay 1ms and -delay 0 side
# by side and compare the delivered rates.
# usage: run.sh BINARY SECONDS DELAY [CLIENTS]
#   SERVE_FLAGS: more flags of `herald serve` (e.g. "--trigger-writers 8")
set -euo pipefail
bin=$1; dur=${2:-20}; delay=${3:-1ms}; clients=${4:-64}
here=$(cd "$(dirname "$0")" && pwd)
tools=${LATPROXY_DIR:-$here/../../../../shared/tools/latproxy}
dir=$(mktemp -d); export HERALD_API_KEY=hk_load_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_remote" -c "CREATE DATABASE herald_remote" >/dev/null
go build -o "$dir/latproxy" "$tools/main.go"
"$dir/latproxy" -listen 127.0.0.1:$pport -upstream 127.0.0.1:5432 -delay "$delay" >"$dir/proxy.log" 2>&1 &
ppid=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$pport) 2>/dev/null && break; sleep 0.05; done
# shellcheck disable=SC2086
HERALD_DATA_DIR="$dir/serve" HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:$pport/herald_remote?sslmode=disable" \
  "$bin" serve --addr 127.0.0.1:$port --log-level warn ${SERVE_FLAGS:-} >"$dir/serve.log" 2>&1 &
pid=$!
trap 'kill $pid $ppid 2>/dev/null; wait $pid $ppid 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
kill -0 $pid 2>/dev/null || { cat "$dir/serve.log"; exit 1; }
"$bin" bench --url http://127.0.0.1:$port --duration "${dur}s" --clients "$clients" --pid $pid --feed-duration 1s | tee "$dir/bench.txt" |
  grep -E "delivered messages/s|triggers accepted/s|trigger answer|messages delivered|wrong|VmHWM" || true
echo "delay $delay, $clients clients, ${dur}s: $(awk -F'  +' '$1 == "delivered messages/s" {print $2}' "$dir/bench.txt") msgs/s"
