#!/usr/bin/env bash
# Load from outside: `herald serve` on a fresh store, `herald bench` in another
# process against its HTTP API, then `herald bench baseline` (the same writes
# as raw SQL, same concurrency) on another fresh store of the same kind, and
# the ratio of the two.
# usage: run.sh BINARY sqlite|postgres SECONDS
#   BENCH_FLAGS: flags of both commands (--clients, --subscribers), e.g. "--clients 16"
#   LOAD_FLAGS: flags of `herald bench` alone, e.g. "--probes 4 --feed-duration 30s"
#   SERVE_BIN: the binary that serves (default BINARY), to load an older build side by side
#   NO_BASELINE=1: skip the baselines
#   GROUPED_FLAGS: the grouped baseline's split of the 32 triggers in flight (default: SQLite
#     "--clients 1 --group 32", PostgreSQL "--clients 2 --group 16", the fastest splits measured)
set -euo pipefail
bin=$1; store=$2; dur=${3:-60}
dir=$(mktemp -d)
port=${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}; export HERALD_API_KEY=hk_load_0123456789abcdefghijklmnop
unset HERALD_DATABASE_URL HERALD_DATA_DIR
pg=postgres://postgres@127.0.0.1:5432
fresh_db() { psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null; }
serve_env=(HERALD_DATA_DIR="$dir/serve")
base_flags=(--data-dir "$dir/baseline")
case "$store" in
  postgres)
    fresh_db herald_load; fresh_db herald_load_base; fresh_db herald_load_group
    serve_env+=(HERALD_DATABASE_URL="$pg/herald_load?sslmode=disable")
    base_flags+=(--database-url "$pg/herald_load_base?sslmode=disable")
    group_flags=(--data-dir "$dir/grouped" --database-url "$pg/herald_load_group?sslmode=disable")
    grouped=${GROUPED_FLAGS:-"--clients 2 --group 16"} ;;
  sqlite)
    group_flags=(--data-dir "$dir/grouped")
    grouped=${GROUPED_FLAGS:-"--clients 1 --group 32"} ;;
  *) echo "usage: run.sh BINARY sqlite|postgres SECONDS" >&2; exit 2 ;;
esac

env "${serve_env[@]}" "${SERVE_BIN:-$bin}" serve --addr 127.0.0.1:$port --log-level warn >"$dir/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.1; done
kill -0 $pid 2>/dev/null || { cat "$dir/serve.log"; exit 1; }

# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
"$bin" bench --url http://127.0.0.1:$port --duration "${dur}s" --pid $pid ${BENCH_FLAGS:-} ${LOAD_FLAGS:-} | tee "$dir/bench.txt"
kill $pid; wait $pid 2>/dev/null || true; trap - EXIT

[ -n "${NO_BASELINE:-}" ] && exit 0
echo
# shellcheck disable=SC2086
"$bin" "${base_flags[@]}" bench baseline --duration "${dur}s" ${BENCH_FLAGS:-} | tee "$dir/baseline.txt"

echo
# shellcheck disable=SC2086
"$bin" "${group_flags[@]}" bench baseline --duration "${dur}s" $grouped | tee "$dir/grouped.txt"

value() { awk -F'  +' -v k="$2" '$1 == k {print $2}' "$dir/$1.txt"; }
echo
printf '%s %s: Herald %s msgs/s delivered (%s triggers/s accepted), baseline %s msgs/s: Herald/baseline = %.2f\n' \
  "$(basename "$bin")" "$store" "$(value bench 'delivered messages/s')" "$(value bench 'triggers accepted/s')" \
  "$(value baseline 'baseline messages/s')" \
  "$(echo "$(value bench 'delivered messages/s') / $(value baseline 'baseline messages/s')" | bc -l)"
printf '%s %s: grouped baseline (%s) %s msgs/s: Herald/grouped baseline = %.2f\n' \
  "$(basename "$bin")" "$store" "$grouped" "$(value grouped 'baseline messages/s')" \
  "$(echo "$(value bench 'delivered messages/s') / $(value grouped 'baseline messages/s')" | bc -l)"
