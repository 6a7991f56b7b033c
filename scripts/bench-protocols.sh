#!/usr/bin/env bash
# JSON REST vs binary REST vs gRPC (workload 7 of the design's BENCHMARKS.md). Tools: wrk for both
# REST forms (a Lua script per prepared body), ghz for gRPC (a prepared ModelInferRequest), JMH for
# the in-process floor (InferenceFloorBenchmark: OnnxModel.infer on the same input, no server), and
# with --perf-analyzer NVIDIA's perf_analyzer as one load generator for all three forms (what
# Triton users read; from the tritonclient wheel, installed into ~/.cache/modelkeeper/ when missing).
# One server (the work tree's jar, iris and mlp-medium pinned) over loopback; interleaved rounds,
# the protocols' order rotating per round; 1, 8 and 64 clients; one-row requests of iris and
# mlp-medium, a 64-row mlp-medium request, and the round trip without a model (GET
# /v2/health/live, gRPC ServerLive); the server's CPU per request from /proc/<pid>/stat (the tools
# run in processes of their own). About 6 minutes on 2 cores with the defaults.
#
#   scripts/bench-protocols.sh [--rounds N] [--seconds S] [--out DIR] [--perf-analyzer]
#
# Leaves DIR/protocols.csv (every round and cell), DIR/floor.json (JMH), DIR/perf_analyzer.csv
# (with --perf-analyzer), DIR/machine.json and DIR/protocols.md; DIR defaults to
# bench-results/protocols.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=2 out=bench-results/protocols pa=false
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --perf-analyzer) pa=true; shift ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR] [--perf-analyzer]" ;;
  esac
done
need_wrk
need_ghz
$pa && need_perf_analyzer
./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-protocols.sh --rounds $rounds --seconds $seconds" >"$out/machine.json"
start_jar s modelkeeper-cli/target/modelkeeper.jar "$work/logs" --cache-dir "$MK_CACHE" --pin iris,mlp-medium
url="http://127.0.0.1:$PORT_s"
cells=(iris:1 mlp-medium:1 mlp-medium:64)
for cell in "${cells[@]}"; do
  model=${cell%:*} rows=${cell#*:}
  python3 scripts/bench/bodies.py "$url" "$model" "$rows" "$work" >/dev/null
  wrk_lua "$work/$cell-json.lua" POST application/json "$work/$model-$rows.json"
  wrk_lua "$work/$cell-bin.lua" POST application/octet-stream "$work/$model-$rows.bin" "$(cat "$work/$model-$rows.bin.hlen")"
done
wrk_lua "$work/live.lua" GET ""

# measure CELL PROTOCOL CLIENTS SECONDS: one CSV tail (rps,...), by the protocol's tool
measure() {
  local cell=$1 protocol=$2 c=$3 s=$4 model=${1%:*} rows=${1#*:}
  case "$cell/$protocol" in
    none:0/"JSON REST" | none:0/"binary REST") run_wrk "$url/v2/health/live" "$work/live.lua" "$c" "$s" ;;
    none:0/gRPC) run_ghz "$GRPC_s" inference.GRPCInferenceService/ServerLive "$c" "$s" -d '{}' ;;
    */"JSON REST") run_wrk "$url/v2/models/$model/infer" "$work/$cell-json.lua" "$c" "$s" ;;
    */"binary REST") run_wrk "$url/v2/models/$model/infer" "$work/$cell-bin.lua" "$c" "$s" ;;
    */gRPC) run_ghz "$GRPC_s" inference.GRPCInferenceService/ModelInfer "$c" "$s" --binary-file "$work/$model-$rows.grpc" ;;
  esac
}
protocols=("JSON REST" "binary REST" gRPC)
for cell in "${cells[@]}"; do
  for p in "${protocols[@]}"; do measure "$cell" "$p" 8 2 >/dev/null; done # warm-up
done
csv=$out/protocols.csv
echo "round,model,rows,clients,protocol,rps,p50_ms,p99_ms,requests,non2xx,errors,server_cpu_us" >"$csv"
hz=$(getconf CLK_TCK)
for ((r = 1; r <= rounds; r++)); do
  for c in 1 8 64; do
    for cell in none:0 "${cells[@]}"; do
      for ((k = 0; k < 3; k++)); do
        p=${protocols[$(((k + r - 1) % 3))]}
        [[ $cell == none:0 && $p == "binary REST" ]] && continue # one REST round trip
        before=$(cpu_ticks "$PID_s")
        row=$(measure "$cell" "$p" "$c" "$seconds")
        # the server's CPU per answered request; the load tool runs in its own process
        cpu=$(awk -v t="$(($(cpu_ticks "$PID_s") - before))" -v hz="$hz" -v n="$(cut -d, -f4 <<<"$row")" \
          'BEGIN { printf "%.1f", n ? t / hz * 1e6 / n : 0 }')
        echo "$r,${cell%:*},${cell#*:},$c,$p,$row,$cpu" | tee -a "$csv" >&2
      done
    done
  done
done
if $pa; then
  # perf_analyzer's own statistics: a cell is measured in windows of --seconds until three agree
  # within 10% (its default), at most 10 windows; its CSV has its percentiles in microseconds
  rm -f "$out/perf_analyzer.csv"
  for form in "http json" "http binary" "grpc binary"; do
    read -r transport tensors <<<"$form"
    target=127.0.0.1:$([ "$transport" = http ] && echo "$PORT_s" || echo "$GRPC_s")
    for c in 1 8 64; do
      "${PERF_ANALYZER[@]}" -m mlp-medium -u "$target" -i "$transport" --input-tensor-format "$tensors" \
        --output-tensor-format "$tensors" --concurrency-range "$c:$c" --max-trials 10 \
        --measurement-interval "$((seconds * 1000))" -f "$work/pa.csv" >"$work/pa.log" 2>&1 ||
        { tail -20 "$work/pa.log" >&2; die "perf_analyzer failed ($form, $c clients)"; }
      [ -f "$out/perf_analyzer.csv" ] || { printf 'form,'; head -1 "$work/pa.csv"; } >"$out/perf_analyzer.csv"
      tail -n +2 "$work/pa.csv" | sed "s/^/$transport $tensors,/" | tee -a "$out/perf_analyzer.csv" >&2
    done
  done
fi
stop_jar "$PID_s"
# the floor after the server stopped, so that it has both cores as the server had
java -cp modelkeeper-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main InferenceFloorBenchmark \
  -p cell=iris:1,mlp-medium:1,mlp-medium:64 -f 1 -wi 2 -w "${seconds}s" -i 3 -r "${seconds}s" \
  -rf json -rff "$out/floor.json" >"$work/floor.log"
python3 scripts/bench/render.py protocols "$out" | tee "$out/protocols.md"
log "results in $out"
