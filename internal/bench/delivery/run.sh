#!/usr/bin/env bash
# Delivery benchmark: the real binary, wrk in another process, provider fakes
# in a third, over HTTP and SMTP on loopback. wrk sends bulk triggers of 20
# one-step e-mail workflows to 1,000 subscribers; the run ends when the fake
# holds as many distinct e-mails (one subject per event) as were acknowledged.
# With in_app instead of a provider, the same workflow with an in-app step:
# the baseline of the pipeline without a provider call.
# usage: run.sh BINARY sqlite|postgres SECONDS nodemailer|sendgrid|in_app
set -euo pipefail
bin=$1; store=$2; dur=${3:-20}; prov=${4:-nodemailer}
here=$(cd "$(dirname "$0")" && pwd)
port=3999; stats=127.0.0.1:3998; dir=$(mktemp -d); export KEY=hk_bench_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_ext" -c "CREATE DATABASE herald_ext" >/dev/null
  export HERALD_DATABASE_URL='postgres://postgres@127.0.0.1:5432/herald_ext?sslmode=disable'
fi
(cd "$here/../../.." && go build -o "$dir/fakes" ./internal/bench/delivery/fakes)
"$dir/fakes" -stats $stats >"$dir/creds.json" 2>"$dir/fakes.log" &
fpid=$!
HERALD_ALLOW_PRIVATE_NETWORKS=true HERALD_API_KEY=$KEY HERALD_DATA_DIR=$dir "$bin" serve --addr 127.0.0.1:$port >"$dir/out.log" 2>&1 &
pid=$!
trap 'kill $pid $fpid 2>/dev/null; wait $pid $fpid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && curl -sf http://$stats/stats >/dev/null && break; sleep 0.1; done
H="Authorization: ApiKey $KEY"; J='Content-Type: application/json'; U=http://127.0.0.1:$port
step=email
if [ "$prov" = in_app ]; then step=in_app; else
  creds=$(python3 -c "import json,sys;print(json.dumps(json.load(open('$dir/creds.json'))['$prov']))")
  curl -sf $U/v1/integrations -H "$H" -H "$J" -d "{\"providerId\":\"$prov\",\"active\":true,\"credentials\":$creds}" >/dev/null
fi
curl -sf $U/v2/workflows -H "$H" -H "$J" -d '{"name":"Receipt","workflowId":"receipt","steps":[{"name":"mail","type":"'$step'","controlValues":{"subject":"Receipt {{ payload.n }}","body":"<p>Hello {{ subscriber.firstName | default: '"'there'"' }},</p><p>order <b>{{ payload.order }}</b> ({{ payload.items | size }} items) is paid.</p>"}}]}' >/dev/null
python3 - "$U" "$KEY" <<'PY'
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1]); c = http.client.HTTPConnection(u.hostname, u.port)
for i in range(1, 1001):
    c.request("POST", "/v2/subscribers", json.dumps({"subscriberId": f"sub-{i}", "email": f"sub-{i}@bench.test", "firstName": f"S{i}"}),
              {"Authorization": "ApiKey " + sys.argv[2], "Content-Type": "application/json"})
    r = c.getresponse(); r.read(); assert r.status == 201, r.status
PY
probe=$(curl -s -o /dev/null -w '%{http_code}' $U/v1/events/trigger/bulk -H "$H" -H "$J" \
  -d '{"events":[{"name":"receipt","to":"sub-1","payload":{"n":"probe","order":"A-0","items":[]}}]}')
[ "$probe" = 201 ] || { echo "a bulk trigger answered $probe"; exit 1; }
acked0=1
start=$(date +%s.%N)
wrk -t2 -c16 -d${dur}s -s "$here/trigger.lua" --latency $U/v1/events/trigger/bulk > "$dir/wrk.txt"
sent=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
non2xx=$(awk '/Non-2xx/ {print $5}' "$dir/wrk.txt" | grep . || echo 0)
acked=$(( (sent - non2xx) * 20 + acked0 ))
count() {
  if [ "$store" = postgres ]; then psql -qtA -h 127.0.0.1 -U postgres herald_ext -c "SELECT count(*) FROM messages"
  else python3 -c "import sqlite3;print(sqlite3.connect('file:$dir/herald.db?mode=ro',uri=True).execute('select count(*) from messages').fetchone()[0])"; fi
}
field() {
  if [ "$prov" = in_app ]; then count; return; fi # one message per event: received = distinct
  curl -sf http://$stats/stats | python3 -c "import json,sys;print(json.load(sys.stdin)['$prov']['$1'])"
}
for _ in $(seq 1200); do [ "$(field distinct)" -ge "$acked" ] && break; sleep 0.2; done
done_at=$(date +%s.%N)
sleep 1 # requests wrk cut off at its end may still deliver: count them too
got=$(field received); distinct=$(field distinct)
rss=$(ps -o rss= -p $pid)
lost=$((acked - distinct)); [ $lost -lt 0 ] && lost=0
printf '%s %s %s: %s bulk requests/s of 20 (p50 %s, p99 %s, non-2xx %s); %s e-mails acknowledged, %s delivered (%s distinct, %s lost) in %.1f s = %.0f deliveries/s; RSS %d MB\n' \
  "$(basename "$bin")" "$store" "$prov" "$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")" \
  "$(awk '$1=="50%" {print $2}' "$dir/wrk.txt")" "$(awk '$1=="99%" {print $2}' "$dir/wrk.txt")" "$non2xx" \
  "$acked" "$got" "$distinct" "$lost" "$(echo "$done_at - $start" | bc)" \
  "$(echo "$distinct / ($done_at - $start)" | bc -l)" $((rss/1024))
