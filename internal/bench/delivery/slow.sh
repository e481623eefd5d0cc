#!/usr/bin/env bash
# Slow providers: COUNT e-mails, bulk-triggered at once (100 events a
# request, one subscriber each of 1,000), through a provider fake that takes
# DELAY to answer every message (SendGrid's and Twilio's usual 100–400 ms),
# to the real binary in another process. Reports deliveries per second from
# the first trigger to the last message the fake holds, lost and duplicated
# messages, and the server's peak RSS.
# usage: slow.sh BINARY sqlite|postgres sendgrid|nodemailer COUNT [DELAY] [MAXCONCURRENCY]
#   MAXCONCURRENCY: the integration's configurations.maxConcurrency (default: none, Herald's default)
#   SERVE_FLAGS: more flags of `herald serve` (e.g. "--provider-concurrency 512")
set -euo pipefail
bin=$1; store=$2; prov=$3; count=$4; delay=${5:-200ms}; maxc=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
port=3997; stats=127.0.0.1:3996; dir=$(mktemp -d); export KEY=hk_bench_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL
if [ "$store" = postgres ]; then
  psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_slow" -c "CREATE DATABASE herald_slow" >/dev/null
  export HERALD_DATABASE_URL='postgres://postgres@127.0.0.1:5432/herald_slow?sslmode=disable'
fi
(cd "$here/../../.." && go build -o "$dir/fakes" ./internal/bench/delivery/fakes)
"$dir/fakes" -stats $stats -delay "$delay" >"$dir/creds.json" 2>"$dir/fakes.log" &
fpid=$!
# shellcheck disable=SC2086
HERALD_ALLOW_PRIVATE_NETWORKS=true HERALD_API_KEY=$KEY HERALD_DATA_DIR=$dir "$bin" serve --addr 127.0.0.1:$port ${SERVE_FLAGS:-} >"$dir/out.log" 2>&1 &
pid=$!
trap 'kill $pid $fpid 2>/dev/null; wait $pid $fpid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && curl -sf http://$stats/stats >/dev/null && break; sleep 0.1; done
python3 - "$port" "$KEY" "$dir/creds.json" "$prov" "$count" "$stats" "$pid" "$maxc" <<'PY'
import http.client, json, sys, time, subprocess
port, key, creds_file, prov, count, stats, pid, maxc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7], sys.argv[8]
c = http.client.HTTPConnection("127.0.0.1", int(port))
H = {"Authorization": "ApiKey " + key, "Content-Type": "application/json"}
def call(method, path, body):
    c.request(method, path, json.dumps(body), H); r = c.getresponse(); data = r.read()
    assert r.status in (200, 201), (r.status, data[:300]); return data
integ = {"providerId": prov, "active": True, "credentials": json.load(open(creds_file))[prov]}
if maxc: integ["configurations"] = {"maxConcurrency": int(maxc)}
call("POST", "/v1/integrations", integ)
call("POST", "/v2/workflows", {"name": "Receipt", "workflowId": "receipt", "steps": [{"name": "mail", "type": "email",
     "controlValues": {"subject": "Receipt {{ payload.n }}", "body": "<p>Hello {{ subscriber.firstName | default: 'there' }}, order <b>{{ payload.n }}</b> is paid.</p>"}}]})
for i in range(1, 1001):
    call("POST", "/v2/subscribers", {"subscriberId": f"sub-{i}", "email": f"sub-{i}@bench.test", "firstName": f"S{i}"})
s = http.client.HTTPConnection(stats.split(":")[0], int(stats.split(":")[1]))
def fake():
    s.request("GET", "/stats"); return json.loads(s.getresponse().read())[prov]
def rss():
    return int(subprocess.run(["ps", "-o", "rss=", "-p", pid], capture_output=True, text=True).stdout.strip() or 0)
peak = rss()
start = time.time()
for b in range(0, count, 100):
    call("POST", "/v1/events/trigger/bulk", {"events": [{"name": "receipt", "to": f"sub-{(i % 1000) + 1}", "payload": {"n": str(i)}}
                                                   for i in range(b, min(b + 100, count))]})
acked = time.time()
got = fake()
while got["distinct"] < count and time.time() - start < 600:
    time.sleep(0.05); peak = max(peak, rss()); got = fake()
end = time.time()
time.sleep(1); got = fake(); peak = max(peak, rss())
print(f"{prov} delay {sys.argv[0] and ''}{count} e-mails: triggers acknowledged in {acked - start:.2f} s; "
      f"{got['distinct']} delivered ({got['received'] - got['distinct']} duplicated, {count - got['distinct']} lost) "
      f"in {end - start:.2f} s = {got['distinct'] / (end - start):.0f} deliveries/s; peak RSS {peak // 1024} MB")
PY
