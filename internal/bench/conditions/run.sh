#!/usr/bin/env bash
# The cost of step conditions, from outside: `herald bench` against the real
# binary with the workflow's in-app step unconditioned and with
# `--condition` (loadgen.BenchCondition: three rules over the payload and the
# subscriber that every trigger meets), alternating, on a fresh store each
# run (the order flips every round, so neither side always runs second);
# prints each rate and the ratio with/without. `herald bench` exits non-zero
# on any wrong answer or missing message, and so does this script.
# usage: run.sh BINARY sqlite|postgres SECONDS [ROUNDS]
set -euo pipefail
bin=$1; store=$2; dur=${3:-20}; rounds=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
rate() { awk -F'  +' '$1 == "delivered messages/s" {print $2}'; }
with=(); without=()
for r in $(seq "$rounds"); do
  order="without with"; [ $((r % 2)) -eq 0 ] && order="with without"
  for mode in $order; do
    flags="--feed-duration 1s --probes 0"
    [ "$mode" = with ] && flags="$flags --condition"
    v=$(NO_BASELINE=1 LOAD_FLAGS="$flags" "$here/../load/run.sh" "$bin" "$store" "$dur" | rate)
    echo "round $r $store $mode conditions: $v msgs/s"
    if [ "$mode" = with ]; then with+=("$v"); else without+=("$v"); fi
  done
done
sum() { local s=0; for v in "$@"; do s=$(echo "$s + ${v//,/}" | bc -l); done; echo "$s"; }
printf '%s: with conditions %.0f msgs/s, without %.0f msgs/s: with/without = %.2f\n' "$store" \
  "$(echo "$(sum "${with[@]}") / $rounds" | bc -l)" "$(echo "$(sum "${without[@]}") / $rounds" | bc -l)" \
  "$(echo "$(sum "${with[@]}") / $(sum "${without[@]}")" | bc -l)"
