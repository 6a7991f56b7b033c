#!/usr/bin/env bash
# Whether loads slow the neighbours: the p99 latency and throughput of a warm model (`iris`, JSON,
# wrk) with the machine otherwise idle, and while another model (`convnet`) loads and unloads in a
# loop through the repository API, at 2 connections (moderate load) and 8 (saturation). Every jar
# is measured in each round, the order rotating per round, so that before/after jars share the
# machine's state. The first jar is the baseline.
#
#   scripts/bench-neighbours.sh [--rounds N] [--seconds S] [--out DIR] NAME=JAR...
#
# Leaves DIR/neighbours.csv (every round and cell: phase idle or loading, and the load/unload
# cycles the loop finished), DIR/machine.json and DIR/neighbours.md (medians over the rounds and
# the ratios of loading to idle), and prints the Markdown. DIR defaults to bench-results/neighbours.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=10 out=bench-results/neighbours given="$*"
jars=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *=*) jars+=("$1"); shift ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR] NAME=JAR..." ;;
  esac
done
[ ${#jars[@]} -ge 1 ] || die "name at least one NAME=JAR (the first is the baseline)"
for entry in "${jars[@]}"; do [ -f "${entry#*=}" ] || die "no jar at ${entry#*=}"; done
need_wrk
command -v curl >/dev/null || die "curl is missing: apt-get install -y curl"
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-neighbours.sh $given" >"$out/machine.json"
csv=$out/neighbours.csv
echo "round,name,phase,clients,rps,p50_ms,p99_ms,requests,non2xx,errors,cycles" >"$csv"

# load_loop URL SECONDS COUNT_FILE: loads and unloads convnet until SECONDS have passed; writes the
# number of finished cycles to COUNT_FILE. Any answer but 200 stops the run.
load_loop() {
  local url=$1 seconds=$2 count=$3 n=0 end=$((SECONDS + $2))
  while ((SECONDS < end)); do
    for op in load unload; do
      code=$(curl -s -o "$work/answer" -w '%{http_code}' -X POST "$url/v2/repository/models/convnet/$op")
      [ "$code" = 200 ] || { cat "$work/answer" >&2; die "convnet $op answered $code"; }
    done
    n=$((n + 1))
  done
  echo "$n" >"$count"
}

n=${#jars[@]}
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < n; k++)); do
    entry=${jars[$(((k + round - 1) % n))]}
    name=${entry%%=*}
    start_jar s "${entry#*=}" "$work/logs-$name" --cache-dir "$MK_CACHE/bench-neighbours-$name" \
      --pin iris
    url="http://127.0.0.1:$PORT_s"
    if [ ! -f "$work/iris.lua" ]; then
      python3 scripts/bench/bodies.py "$url" iris 1 "$work" >/dev/null
      wrk_lua "$work/iris.lua" POST application/json "$work/iris-1.json"
    fi
    # warm: the iris path, and convnet's load (its cost measured, its pre-optimized form written)
    run_wrk "$url/v2/models/iris/infer" "$work/iris.lua" 8 3 >/dev/null
    load_loop "$url" 3 "$work/cycles"
    for c in 2 8; do
      row=$(run_wrk "$url/v2/models/iris/infer" "$work/iris.lua" "$c" "$seconds")
      echo "$round,$name,idle,$c,$row,0" | tee -a "$csv" >&2
      load_loop "$url" "$seconds" "$work/cycles" &
      loop=$!
      row=$(run_wrk "$url/v2/models/iris/infer" "$work/iris.lua" "$c" "$seconds")
      wait "$loop"
      echo "$round,$name,loading,$c,$row,$(cat "$work/cycles")" | tee -a "$csv" >&2
    done
    stop_jar "$PID_s"
  done
done
python3 - "$csv" <<'PY' | tee "$out/neighbours.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = list(dict.fromkeys(r["name"] for r in rows))
def med(name, phase, c, key):
    v = [float(r[key]) for r in rows if r["name"] == name and r["phase"] == phase and r["clients"] == c]
    return statistics.median(v) if v else float("nan")
print("| jar | clients | idle req/s | idle p99 ms | loading req/s | loading p99 ms | load/unload cycles | p99 loading/idle | req/s loading/idle |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for c in ("2", "8"):
    for name in names:
        ir, ip = med(name, "idle", c, "rps"), med(name, "idle", c, "p99_ms")
        lr, lp = med(name, "loading", c, "rps"), med(name, "loading", c, "p99_ms")
        cy = med(name, "loading", c, "cycles")
        print(f"| {name} | {c} | {ir:.0f} | {ip:.2f} | {lr:.0f} | {lp:.2f} | {cy:.0f} | {lp/ip:.2f}x | {lr/ir:.2f}x |")
print()
print(f"Medians of {len(set(r['round'] for r in rows))} rounds; non-2xx answers and socket errors: "
      f"{sum(int(r['non2xx']) for r in rows)} and {sum(int(r['errors']) for r in rows)}.")
PY
log "results in $out"
