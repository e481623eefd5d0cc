#!/bin/bash
# Many cores: one Herald process against the grouped raw-SQL baseline on a
# bigger machine, both stores, with the trigger committers swept on
# PostgreSQL. Uses the pack of ../shared/tools/many-core/pack.sh
# (.many-core/ at the checkout's root: herald.xz and PostgreSQL 15); run it
# from the checkout's root on the other machine:
#   ../shared/tools/many-core/pack.sh     # here
#   CGO_ENABLED=0 go build -o .many-core/latproxy ../shared/tools/latproxy   # for "remote"
#   bash internal/bench/manycore/run.sh   # there; DUR (15s), OUT (log dir), WRITERS ("0 2 4 8"),
#                                         # SECTIONS ("sqlite pg remote"), PAIRS (2)
# Each line says the run, then its msgs/s, and the CPU Herald used (cores).
set -u
OUT=${OUT:-/tmp/many-core-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
DUR=${DUR:-15s}; WRITERS=${WRITERS:-"0 2 4 8"}; SECTIONS=${SECTIONS:-"sqlite pg remote"}; PAIRS=${PAIRS:-2}; W=${TMPDIR:-/tmp}/many-core; rm -rf "$W"; mkdir -p "$W/pg"
unxz() { python3 -c 'import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' "$1" "$2"; }
unxz .many-core/herald.xz "$W/herald"; unxz .many-core/pg.tar.xz "$W/pg.tar"; chmod +x "$W/herald"
tar -C "$W/pg" -xf "$W/pg.tar"; rm "$W/pg.tar"
export LD_LIBRARY_PATH=$W/pg/libs; B=$W/pg/usr/lib/postgresql/15/bin; H=$W/herald
mkdir -p "$W/pgdata"; chown -R 65534:65534 "$W/pg" "$W/pgdata" "$W"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$@"; }
asnobody $B/initdb -D "$W/pgdata" -U postgres -A trust >/dev/null
asnobody $B/pg_ctl -D "$W/pgdata" -o "-p 5499 -k $W/pgdata -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=2GB" -l "$W/pg.log" -w start >/dev/null
PSQL() { $B/psql -h 127.0.0.1 -p 5499 -U postgres -qAt "$@"; }
PG=postgres://postgres@127.0.0.1:5499
el "nproc $(nproc); $(PSQL -c 'select version()' | cut -c1-20); $(grep -m1 'model name' /proc/cpuinfo)"
export HERALD_API_KEY=hk_manycore_0123456789abcdefghij HERALD_SECRET=manycore-secret-0123456789abcdefghij HERALD_DEMO_PAGE=false
PORT=4100; PID=; N=0
serve() { PORT=$((PORT+1)); local db=$1; shift
  HERALD_DATA_DIR=$W/data-$PORT HERALD_DATABASE_URL=${db:+$PG/$db?sslmode=disable} $H serve --addr 127.0.0.1:$PORT --log-level info "$@" >"$W/serve-$PORT.log" 2>&1 &
  PID=$!; URL=http://127.0.0.1:$PORT
  for _ in $(seq 150); do curl -sf $URL/health >/dev/null && break; sleep 0.1; done
  grep -o 'writers=[0-9]*' "$W/serve-$PORT.log" | head -1; }
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
bench() { # CLIENTS LABEL
  local c0 t0; c0=$(cpu $PID); t0=$(date +%s%N)
  $H bench --url $URL --duration $DUR --clients "$1" --feed-duration 2s --pid $PID 2>/dev/null > "$W/b.txt"
  local c1 t1; c1=$(cpu $PID); t1=$(date +%s%N)
  el "$2, $1 clients: $(awk -F'  +' '$1=="delivered messages/s"{d=$2} $1=="triggers accepted/s"{a=$2} $1=="server memory"{sub(/, now.*/,"",$2); m=$2} END{print d" msgs/s delivered, "a" accepted/s, peak RSS "m}' "$W/b.txt"), herald CPU $(awk -v c=$((c1-c0)) -v t=$((t1-t0)) -v hz=$(getconf CLK_TCK) 'BEGIN{printf "%.1f cores", c/hz/(t/1e9)}')"
  awk -F'  +' '($1 ~ /^wrong/ || $1=="errors") && $2!="0"{print "  !! "$0} $1=="messages delivered"{print "  "$0}' "$W/b.txt"; }
stop() { kill $PID 2>/dev/null; wait $PID 2>/dev/null; }
base() { el "$1: $($H $2 bench baseline --duration $DUR $3 2>&1 | grep -E 'baseline messages/s|rror' | tr -s ' ')"; }
on() { [[ " $SECTIONS " == *" $1 "* ]]; }
if on sqlite; then
  serve ""; bench 128 "SQLite, one process"; stop
  base "SQLite grouped baseline (1 x 32)" "--data-dir $W/b1" "--clients 1 --group 32"
fi
if on pg; then
PSQL -c "create database g16"; base "PostgreSQL grouped baseline (16 x 16)" "--data-dir $W/g16 --database-url $PG/g16?sslmode=disable" "--clients 16 --group 16"
for w in $WRITERS; do N=$((N+1)); PSQL -c "create database h$N"
  serve h$N --trigger-writers $w; bench 128 "PostgreSQL, one process, --trigger-writers $w"; stop; done
if [ -n "${CLIENTS256:-}" ]; then N=$((N+1)); PSQL -c "create database h$N"; serve h$N --trigger-writers $CLIENTS256; bench 256 "PostgreSQL, one process, --trigger-writers $CLIENTS256"; stop; fi
fi
# A database across a network on many cores: latproxy with -delay 0 and
# -delay 1ms, alternating, 64 clients, the default committers.
if on remote && [ -x .many-core/latproxy ]; then
  for i in $(seq $PAIRS); do for d in 0 1ms; do N=$((N+1)); PSQL -c "create database h$N"
    .many-core/latproxy -listen 127.0.0.1:6543 -upstream 127.0.0.1:5499 -delay $d >"$W/proxy.log" 2>&1 & LP=$!
    for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/6543) 2>/dev/null && break; sleep 0.05; done; PG=postgres://postgres@127.0.0.1:6543 serve h$N; PG=postgres://postgres@127.0.0.1:5499
    bench 64 "PostgreSQL behind latproxy -delay $d, one process"; stop; kill $LP; wait $LP 2>/dev/null; done; done
fi
asnobody $B/pg_ctl -D "$W/pgdata" -m fast stop >/dev/null; el done
