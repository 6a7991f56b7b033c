#!/usr/bin/env bash
# System shared memory against the socket, with NVIDIA's perf_analyzer as the load generator (what
# Triton users read; from the tritonclient wheel, installed into ~/.cache/modelkeeper/ when
# missing): an identity model with one 4 MiB FP32 input (and its 4 MiB output), at concurrency 1
# and 8, over HTTP with binary tensors, over gRPC, and with every input and output in system
# shared memory over HTTP and over gRPC; and gRPC streaming against unary gRPC on the "simple"
# model at concurrency 1, 8 and 64. One server (the work tree's jar, models from
# scripts/bench/fast_models.py) on loopback; interleaved rounds, the modes' order rotating per
# round. Meant for a quiet machine: about 4 minutes with the defaults.
#
#   scripts/bench-shm.sh [--rounds N] [--seconds S] [--out DIR] [--jar JAR]
#
# Leaves DIR/shm.csv (every round and cell: inferences/s and p50/p99 latency in microseconds, as
# perf_analyzer measured them), DIR/machine.json and DIR/shm.md (medians, and each shared memory
# cell's ratio to HTTP binary at the same concurrency); DIR defaults to bench-results/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=5 out=bench-results/shm jar=modelkeeper-cli/target/modelkeeper.jar
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jar) jar=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR] [--jar JAR]" ;;
  esac
done
need_perf_analyzer
[ -f "$jar" ] || ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-shm.sh --rounds $rounds --seconds $seconds" >"$out/machine.json"
python3 scripts/bench/fast_models.py "$work/repo"
# room for 8 clients' 4 MiB requests at once, and their regions
HEAP=2g start_jar s "$jar" "$work/logs" --repository "$work/repo" --cache-dir "$work/cache" \
  --pin identity,simple --max-inflight-bytes 512MiB --max-shared-memory-bytes 256MiB
big=(-m identity --shape INPUT0:1048576)
shm_out=(--shared-memory system --output-shared-memory-size 4194304)

# run MODE CONCURRENCY: perf_analyzer's CSV row for one cell (header first)
run() {
  local mode=$1 c=$2 args
  case "$mode" in
    "HTTP binary") args=("${big[@]}" -i http -u "127.0.0.1:$PORT_s") ;;
    "gRPC") args=("${big[@]}" -i grpc -u "127.0.0.1:$GRPC_s") ;;
    "HTTP shared memory") args=("${big[@]}" -i http -u "127.0.0.1:$PORT_s" "${shm_out[@]}") ;;
    "gRPC shared memory") args=("${big[@]}" -i grpc -u "127.0.0.1:$GRPC_s" "${shm_out[@]}") ;;
    "gRPC unary") args=(-m simple -i grpc -u "127.0.0.1:$GRPC_s") ;;
    "gRPC streaming") args=(-m simple -i grpc -u "127.0.0.1:$GRPC_s" --streaming) ;;
  esac
  "${PERF_ANALYZER[@]}" "${args[@]}" --concurrency-range "$c" \
    --measurement-interval "$((seconds * 1000))" --max-trials 3 --stability-percentage 999 \
    -f "$work/cell.csv" >"$work/cell.log" 2>&1 ||
    { tail -20 "$work/cell.log" >&2; die "perf_analyzer failed: $mode at concurrency $c"; }
  cat "$work/cell.csv"
}

echo "round,workload,mode,concurrency,infer_per_sec,p50_us,p99_us" >"$out/shm.csv"
cells=()
for c in 1 8; do
  for m in "HTTP binary" "gRPC" "HTTP shared memory" "gRPC shared memory"; do cells+=("4 MiB identity|$m|$c"); done
done
for c in 1 8 64; do
  for m in "gRPC unary" "gRPC streaming"; do cells+=("simple|$m|$c"); done
done
for ((r = 1; r <= rounds; r++)); do
  n=${#cells[@]}
  for ((i = 0; i < n; i++)); do
    cell=${cells[$(((i + r - 1) % n))]}
    IFS='|' read -r workload mode c <<<"$cell"
    log "round $r/$rounds: $workload, $mode, concurrency $c"
    run "$mode" "$c" | python3 -c '
import csv, sys
row = list(csv.DictReader(sys.stdin))[0]
print(",".join([sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
                row["Inferences/Second"], row["p50 latency"], row["p99 latency"]]))
' "$r" "$workload" "$mode" "$c" >>"$out/shm.csv"
  done
done
stop_jar "$PID_s"
python3 - "$out/shm.csv" >"$out/shm.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["workload"], r["mode"], int(r["concurrency"])), []).append(r)
med = {k: {f: statistics.median(float(x[f]) for x in v) for f in ("infer_per_sec", "p50_us", "p99_us")}
       for k, v in cells.items()}
print("| workload | mode | clients | infer/s | p50 (us) | p99 (us) | vs HTTP binary |")
print("|---|---|---:|---:|---:|---:|---:|")
for (w, m, c), f in sorted(med.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
    base = med.get((w, "HTTP binary", c))
    ratio = "%.2fx" % (f["infer_per_sec"] / base["infer_per_sec"]) if base and m != "HTTP binary" else ""
    print("| %s | %s | %d | %.0f | %.0f | %.0f | %s |" % (w, m, c, f["infer_per_sec"], f["p50_us"], f["p99_us"], ratio))
PY
cat "$out/shm.md"
