#!/usr/bin/env bash
# Server jars side by side, measured with wrk (REST) and ghz (gRPC) in one interleaved run. In each
# round every jar in turn (the order rotates per round) runs as a child process serving its bundled
# demo models (iris, mlp-medium and convnet pinned), gets a warm-up, then takes closed-loop load at
# 1, 8 and 64 clients over loopback: `iris` JSON and `mlp-medium` binary tensors with wrk (a Lua
# script per body), `convnet` gRPC with ghz (a prepared ModelInferRequest, raw_input_contents).
# The first jar is the baseline of the ratios.
#
#   scripts/bench-jars.sh [--rounds N] [--seconds S] [--warmup S] [--out DIR] NAME=JAR...
#   e.g. scripts/bench-jars.sh before=/tmp/before.jar after=modelkeeper-cli/target/modelkeeper.jar
#
# Leaves DIR/jars.csv (every round and cell), DIR/machine.json and DIR/jars.md (medians over the
# rounds, ratios to the first jar), and prints the Markdown. DIR defaults to bench-results/jars.
# Needs wrk (Debian), ghz (installed with `go install` into ~/.cache/modelkeeper/ when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=5 warmup=3 out=bench-results/jars given="$*"
jars=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *=*) jars+=("$1"); shift ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--warmup S] [--out DIR] NAME=JAR..." ;;
  esac
done
[ ${#jars[@]} -ge 1 ] || die "name at least one NAME=JAR (the first is the baseline)"
for entry in "${jars[@]}"; do [ -f "${entry#*=}" ] || die "no jar at ${entry#*=}"; done
need_wrk
need_ghz
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-jars.sh $given" >"$out/machine.json"
csv=$out/jars.csv
echo "round,name,workload,clients,rps,p50_ms,p99_ms,requests,non2xx,errors" >"$csv"
n=${#jars[@]}
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < n; k++)); do
    entry=${jars[$(((k + round - 1) % n))]}
    name=${entry%%=*}
    start_jar s "${entry#*=}" "$work/logs-$name" --cache-dir "$MK_CACHE/bench-jars-$name" \
      --pin iris,mlp-medium,convnet
    url="http://127.0.0.1:$PORT_s"
    if [ ! -f "$work/iris.lua" ]; then
      python3 scripts/bench/bodies.py "$url" iris 1 "$work" >/dev/null
      python3 scripts/bench/bodies.py "$url" mlp-medium 1 "$work" >/dev/null
      python3 scripts/bench/bodies.py "$url" convnet 1 "$work" >/dev/null
      wrk_lua "$work/iris.lua" POST application/json "$work/iris-1.json"
      wrk_lua "$work/mlp.lua" POST application/octet-stream "$work/mlp-medium-1.bin" \
        "$(cat "$work/mlp-medium-1.bin.hlen")"
    fi
    grpc=(--binary-file "$work/convnet-1.grpc")
    run_wrk "$url/v2/models/iris/infer" "$work/iris.lua" 8 "$warmup" >/dev/null
    run_wrk "$url/v2/models/mlp-medium/infer" "$work/mlp.lua" 8 "$warmup" >/dev/null
    run_ghz "$GRPC_s" inference.GRPCInferenceService/ModelInfer 8 "$warmup" "${grpc[@]}" >/dev/null
    for c in 1 8 64; do
      row=$(run_wrk "$url/v2/models/iris/infer" "$work/iris.lua" "$c" "$seconds")
      echo "$round,$name,iris JSON,$c,$row" | tee -a "$csv" >&2
      row=$(run_wrk "$url/v2/models/mlp-medium/infer" "$work/mlp.lua" "$c" "$seconds")
      echo "$round,$name,mlp-medium binary,$c,$row" | tee -a "$csv" >&2
      row=$(run_ghz "$GRPC_s" inference.GRPCInferenceService/ModelInfer "$c" "$seconds" "${grpc[@]}")
      echo "$round,$name,convnet gRPC,$c,$row" | tee -a "$csv" >&2
    done
    stop_jar "$PID_s"
  done
done
python3 scripts/bench/render.py jars "$out" | tee "$out/jars.md"
log "results in $out"
