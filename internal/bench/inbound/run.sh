#!/usr/bin/env bash
# Inbound delivery events from outside (issue 29, part A): the real binary
# on a fresh store, the provider fakes in another process, and the poster
# (internal/bench/inbound/poster) in a third: it sends EVENTS e-mails
# through a SendGrid integration, then posts a signed `delivered` event for
# each in batches of BATCH, measures how fast they are accepted, polls
# /metrics until all are recorded and checks every message's deliveredAt;
# then times the answer to a batch of 100. A wrong answer fails the script.
# usage: run.sh BINARY sqlite|postgres [EVENTS] [BATCH] [IN_FLIGHT]
set -euo pipefail
bin=$1; store=$2; events=${3:-10000}; batch=${4:-1000}; conc=${5:-1}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
export HERALD_API_KEY=hk_inbound_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
free() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free); stats=127.0.0.1:$(free)
serve_env=(HERALD_DATA_DIR="$dir/serve" HERALD_ALLOW_PRIVATE_NETWORKS=true)
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_inbound" -c "CREATE DATABASE herald_inbound" >/dev/null
  serve_env+=(HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:5432/herald_inbound?sslmode=disable")
fi
(cd "$here/../../.." && go build -o "$dir/fakes" ./internal/bench/delivery/fakes && go build -o "$dir/poster" ./internal/bench/inbound/poster)
"$dir/fakes" -stats "$stats" >"$dir/creds.json" 2>"$dir/fakes.log" &
fpid=$!
env "${serve_env[@]}" "$bin" serve --addr 127.0.0.1:$port --log-level warn >"$dir/serve.log" 2>&1 &
pid=$!
trap 'kill $pid $fpid 2>/dev/null; wait $pid $fpid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && [ -s "$dir/creds.json" ] && break; sleep 0.1; done
echo "$(basename "$bin") $store:"
"$dir/poster" -url http://127.0.0.1:$port -creds "$dir/creds.json" -events "$events" -batch "$batch" -concurrency "$conc" ||
  { tail -20 "$dir/serve.log"; exit 1; }
echo "RSS $(( $(ps -o rss= -p $pid) / 1024 )) MB"
