#!/usr/bin/env bash
# Dynamic batching and per-model isolation (workload 8 of the design's BENCHMARKS.md). Tools: wrk
# (binary tensors, a Lua script per body) and JMH for the in-process floor (InferenceFloorBenchmark,
# convnet at 1 and 32 rows). The work tree's jar serves copies of the demo repository whose convnet
# config.json differs: off (max_batch_size 1, max_concurrency 2), on (max_batch_size 32,
# max_queue_delay 200 us, max_concurrency 2); interleaved rounds at 1, 8 and 64 clients, the order
# rotating. Isolation: iris from one client on a server whose batching convnet may run once at a
# time, in windows that take turns: idle, beside a spinning core (a busy shell loop), beside convnet
# saturated by 64 clients. A few minutes on 2 cores with the defaults.
#
#   scripts/bench-batching.sh [--rounds N] [--seconds S] [--out DIR]
#
# Leaves DIR/batching.csv, DIR/isolation.csv, DIR/floor.json (JMH), DIR/machine.json and
# DIR/batching.md; DIR defaults to bench-results/batching.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=2 seconds=6 out=bench-results/batching
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR]" ;;
  esac
done
need_wrk
./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.memory.ModelAlone --demo \
  "$MK_CACHE/demo-repository" >/dev/null
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-batching.sh --rounds $rounds --seconds $seconds" >"$out/machine.json"

# repository NAME BATCH DELAY_US CONCURRENCY: the demo models (hard links), convnet's config rewritten
repository() {
  cp -al "$MK_CACHE/demo-repository" "$work/$1"
  rm "$work/$1/convnet/1/config.json"
  printf '{"max_batch_size": %d, "max_queue_delay": %d, "max_concurrency": %d, "intra_op_threads": 1, "inter_op_threads": 1}\n' \
    "$2" "$3" "$4" >"$work/$1/convnet/1/config.json"
}
repository off 1 0 2
repository on 32 200 2
repository capped 32 200 1
jar=modelkeeper-cli/target/modelkeeper.jar
start_jar off "$jar" "$work/logs" --repository "$work/off" --pin convnet
start_jar on "$jar" "$work/logs" --repository "$work/on" --pin convnet
python3 scripts/bench/bodies.py "http://127.0.0.1:$PORT_on" convnet 1 "$work" >/dev/null
wrk_lua "$work/conv.lua" POST application/octet-stream "$work/convnet-1.bin" "$(cat "$work/convnet-1.bin.hlen")"
declare -A ports=([off]=$PORT_off [on]=$PORT_on)
for s in off on; do run_wrk "http://127.0.0.1:${ports[$s]}/v2/models/convnet/infer" "$work/conv.lua" 8 3 >/dev/null; done
echo "round,clients,setting,rps,p50_ms,p99_ms,requests,non2xx,errors" >"$out/batching.csv"
for ((r = 1; r <= rounds; r++)); do
  for c in 1 8 64; do
    for s in $( ((r % 2)) && echo off on || echo on off); do
      row=$(run_wrk "http://127.0.0.1:${ports[$s]}/v2/models/convnet/infer" "$work/conv.lua" "$c" "$seconds")
      echo "$r,$c,$s,$row" | tee -a "$out/batching.csv" >&2
    done
  done
done
stop_jar "$PID_off"
stop_jar "$PID_on"

start_jar capped "$jar" "$work/logs" --repository "$work/capped" --pin convnet,iris
base=http://127.0.0.1:$PORT_capped/v2/models
python3 scripts/bench/bodies.py "http://127.0.0.1:$PORT_capped" iris 1 "$work" >/dev/null
wrk_lua "$work/iris.lua" POST application/octet-stream "$work/iris-1.bin" "$(cat "$work/iris-1.bin.hlen")"
run_wrk "$base/iris/infer" "$work/iris.lua" 1 3 >/dev/null
run_wrk "$base/convnet/infer" "$work/conv.lua" 8 3 >/dev/null
echo "round,clients,window,rps,p50_ms,p99_ms,requests,non2xx,errors" >"$out/isolation.csv"
windows=(idle spin busy)
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < 3; k++)); do
    w=${windows[$(((k + r - 1) % 3))]}
    other=""
    case $w in
      spin) timeout "$((seconds + 2))" sh -c 'while :; do :; done' & other=$! ;;
      busy) run_wrk "$base/convnet/infer" "$work/conv.lua" 64 "$((seconds + 2))" >"$work/busy.csv" & other=$! ;;
    esac
    [ -n "$other" ] && sleep 1 # convnet's queue fills, the loop takes its core
    row=$(run_wrk "$base/iris/infer" "$work/iris.lua" 1 "$seconds")
    echo "$r,1,$w,$row" | tee -a "$out/isolation.csv" >&2
    [ -n "$other" ] && { wait "$other" || true; }
    [ "$w" = busy ] && echo "$r,64,convnet (saturating),$(cat "$work/busy.csv")" | tee -a "$out/isolation-convnet.csv" >&2
  done
done
stop_jar "$PID_capped"
java -cp modelkeeper-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main InferenceFloorBenchmark \
  -p cell=convnet:1,convnet:32 -f 1 -wi 2 -w 2s -i 3 -r 2s -rf json -rff "$out/floor.json" >"$work/floor.log"
python3 scripts/bench/render.py batching "$out" | tee "$out/batching.md"
log "results in $out"
