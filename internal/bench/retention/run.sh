#!/usr/bin/env bash
# Retention from outside: MESSAGES old in-app messages (default 1,000,000; 400 days old, 100 each for
# 10,000 subscribers, read and seen in turn, with their inbox counts) written by SQL into a fresh store;
# then `herald serve` twice on it, each under `herald bench` and a prober that sends one trigger at a
# time (its slowest answer): first with the purge off (--retention-inbox 0, the baseline), then purging
# them (--retention-interval 5s: the purge starts as the bench does). Prints the purge's rate (rows/s,
# from herald_retention_deleted_total read every 0.25 s), the trigger answer p99 and delivered
# messages/s of each run and their ratios, and checks that every old message is gone and their
# subscribers' counts are zero.
# usage: run.sh BINARY sqlite|postgres [SECONDS] [MESSAGES]
#   LOAD_FLAGS: flags of both `herald bench` runs (default "--feed-duration 5s")
set -euo pipefail
bin=$1; store=$2; dur=${3:-30}; n=${4:-1000000}
dir=$(mktemp -d)
export HERALD_API_KEY=hk_load_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
serve_env=(HERALD_DATA_DIR="$dir/data")
pg=postgres://postgres@127.0.0.1:5432/herald_retention?sslmode=disable
case "$store" in
  postgres)
    psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS herald_retention" -c "CREATE DATABASE herald_retention" >/dev/null
    serve_env+=(HERALD_DATABASE_URL="$pg")
    sql() { psql -q -At "$pg" -c "$1"; } ;;
  sqlite)
    sql() { sqlite3 "$dir/data/herald.db" "$1"; } ;;
  *) echo "usage: run.sh BINARY sqlite|postgres [SECONDS] [MESSAGES]" >&2; exit 2 ;;
esac
env "${serve_env[@]}" "$bin" migrate >/dev/null

# The old messages: 400 days old, a millisecond apart every 100.
old=$(( ($(date +%s) - 400 * 86400) * 1000 ))
cols="id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id, template_identifier,
  transaction_id, channel, provider_id, content, status, read, seen, created_at, updated_at"
echo "seeding $n old in-app messages ($store)"
start=$(date +%s.%N)
if [ "$store" = postgres ]; then
  sql "INSERT INTO messages ($cols) SELECT lpad(to_hex(i), 24, '0'), 'bench', 'bench', 'n' || lpad(to_hex(i), 23, '0'),
    'j' || lpad(to_hex(i), 23, '0'), 'retention-' || (i % 10000), 'bench', 'bench', 't' || lpad(to_hex(i), 23, '0'), 'in_app',
    'herald', 'An old message of the retention benchmark', 'sent', i % 2 = 1, i % 3 = 0, $old + i / 100, $old + i / 100
    FROM generate_series(0, $n - 1) i"
else
  sql "INSERT INTO messages ($cols) SELECT printf('%024x', i), 'bench', 'bench', printf('n%023x', i), printf('j%023x', i),
    'retention-' || (i % 10000), 'bench', 'bench', printf('t%023x', i), 'in_app', 'herald',
    'An old message of the retention benchmark', 'sent', i % 2, i % 3 = 0, $old + i / 100, $old + i / 100
    FROM (WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $n - 1) SELECT i FROM c);
    PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
fi
sql "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen, unread_seen, read_unseen, read_seen)
  SELECT subscriber_id, 0, '[]', 'bench', sum(CASE WHEN NOT read AND NOT seen THEN 1 ELSE 0 END),
    sum(CASE WHEN NOT read AND seen THEN 1 ELSE 0 END), sum(CASE WHEN read AND NOT seen THEN 1 ELSE 0 END),
    sum(CASE WHEN read AND seen THEN 1 ELSE 0 END)
  FROM messages WHERE environment_id = 'bench' GROUP BY subscriber_id"
[ "$store" = postgres ] && sql "VACUUM ANALYZE messages" && sql "ANALYZE inbox_counts"
printf 'seeded in %.0f s; store size %s\n' "$(echo "$(date +%s.%N) - $start" | bc -l)" \
  "$(if [ "$store" = postgres ]; then sql "SELECT pg_size_pretty(pg_database_size(current_database()))"; else du -sh "$dir/data" | cut -f1; fi)"

# run NAME FLAGS...: serve with FLAGS under the bench and the prober.
run() {
  local name=$1; shift
  env "${serve_env[@]}" "$bin" serve --addr 127.0.0.1:$port --log-level warn "$@" >"$dir/$name.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
  for _ in $(seq 100); do curl -sf $base/health >/dev/null && break; sleep 0.1; done
  kill -0 $pid 2>/dev/null || { cat "$dir/$name.log"; exit 1; }
  curl -s -o /dev/null -X POST $base/v2/workflows -H "Authorization: ApiKey $HERALD_API_KEY" -H 'Content-Type: application/json' \
    -d '{"name":"retention-probe","workflowId":"retention-probe","steps":[{"name":"inbox","type":"in_app","controlValues":{"body":"probe"}}]}'
  rm -f "$dir/stop" "$dir/stop-metrics"
  (while [ ! -e "$dir/stop-metrics" ]; do
     printf '%s %s\n' "$(date +%s.%N)" "$(curl -s $base/metrics | awk '/^herald_retention_deleted_total\{kind="inbox_messages"\}/ {print $2}')"
     sleep 0.25
   done) >"$dir/$name.metrics" &
  metrics=$!
  (while [ ! -e "$dir/stop" ]; do
     curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST $base/v1/events/trigger -H "Authorization: ApiKey $HERALD_API_KEY" \
       -H 'Content-Type: application/json' -d '{"name":"retention-probe","to":"probe"}'
   done) >"$dir/$name.probe" &
  local prober=$!
  date +%s.%N >"$dir/$name.window"
  # shellcheck disable=SC2086 # LOAD_FLAGS is a list of flags
  "$bin" bench --url $base --duration "${dur}s" --pid $pid ${LOAD_FLAGS:---feed-duration 5s} >"$dir/$name.txt"
  date +%s.%N >>"$dir/$name.window"
  touch "$dir/stop"; wait $prober
}
value() { awk -F'  +' -v k="$2" '$1 == k {print $2}' "$dir/$1.txt"; }
p99() { value "$1" "trigger answer" | sed -E 's/.*p99 ([0-9.]+) ms.*/\1/'; }
probe() { awk '{ if ($1 != 201) bad++; if ($2 > max) max = $2; n++ } END { printf "%d triggers, slowest %.0f ms, %d not 201", n, max * 1000, bad }' "$dir/$1.probe"; }

echo "baseline: the purge off, $dur s"
run baseline --retention-inbox 0
kill $pid; wait $pid 2>/dev/null || true

touch "$dir/stop-metrics"; wait $metrics

echo "purging: --retention-interval 5s, $dur s"
run purge --retention-interval 5s
deleted() { tail -1 "$dir/purge.metrics" | awk '{printf "%d", $2}'; }
for _ in $(seq 2400); do [ "$(deleted)" -ge "$n" ] && break; sleep 0.25; done
touch "$dir/stop-metrics"; wait $metrics
kill $pid; wait $pid 2>/dev/null || true; trap - EXIT
[ "$(deleted)" -ge "$n" ] || { echo "the purge did not finish: $(deleted) of $n"; tail "$dir/purge.log"; exit 1; }

left=$(sql "SELECT count(*) FROM messages WHERE environment_id = 'bench'")
counts=$(sql "SELECT coalesce(sum(unread_unseen + unread_seen + read_unseen + read_seen), 0) FROM inbox_counts WHERE environment_id = 'bench'")
for name in baseline purge; do
  printf '%-8s %s triggers/s accepted, %s msgs/s delivered, trigger answer %s; prober: %s\n' "$name" \
    "$(value $name 'triggers accepted/s')" "$(value $name 'delivered messages/s')" "$(value $name 'trigger answer')" "$(probe $name)"
  grep -E "^(wrong|errors)" "$dir/$name.txt" | tr -s ' ' | paste -sd ';' -
done
# The purge ran from the last reading of 0 to the first of all (within 0.25 s each); during the
# bench (its subscribers, triggers and feed reads) it deleted what the readings closest to the
# bench's start and end say.
awk -v n="$n" -v store="$store" -v from="$(head -1 "$dir/purge.window")" -v to="$(tail -1 "$dir/purge.window")" '
  $2 + 0 == 0 { start = $1 } $2 + 0 >= n && !end { end = $1 }
  $1 <= from { a = $2 + 0 } $1 <= to { b = $2 + 0 }
  END { printf "%s: purged %d in-app messages in %.1f s: %.0f rows/s; during the bench (%.0f s) %d: %.0f rows/s\n",
    store, n, end - start, n / (end - start), to - from, b - a, (b - a) / (to - from) }' "$dir/purge.metrics"
printf '%s: during the purge / baseline: trigger answer p99 %.2f, delivered messages/s %.2f\n' "$store" \
  "$(echo "$(p99 purge) / $(p99 baseline)" | bc -l)" \
  "$(echo "$(value purge 'delivered messages/s' | tr -d ,) / $(value baseline 'delivered messages/s' | tr -d ,)" | bc -l)"
echo "left: $left old messages, $counts in their subscribers' counts"
[ "$left" = 0 ] && [ "$counts" = 0 ]
