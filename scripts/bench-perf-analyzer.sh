#!/usr/bin/env bash
# NVIDIA's perf_analyzer against ModelKeeper, as a Triton user runs it: HTTP and gRPC, a few
# concurrency levels, each cell measured by perf_analyzer's own time windows, with its client-side
# latencies and the server-side section it reads from the statistics extension (queue, compute
# input, compute infer, compute output). perf_analyzer is the binary inside the tritonclient wheel
# (the newest that runs on Debian 12's glibc), installed with the CUDA runtime library it links
# (no GPU is used) into ~/.cache/modelkeeper/ when missing; it needs Debian's libb64-0d.
#
#   scripts/bench-perf-analyzer.sh [--models "iris mlp-medium convnet"] [--protocols "http grpc"]
#       [--concurrency "1 8 64"] [--seconds S] [--max-trials N] [--stability PERCENT]
#       [--server HOST:HTTP_PORT,HOST:GRPC_PORT] [--out DIR]
#
# Without --server it builds the work tree's jar when missing and serves the bundled demo models
# with them pinned (loaded before the first window); with --server it measures a running server
# (any repository: a model shaped like Triton's `simple` works as it does on Triton). A cell's
# windows last --seconds (default 2); perf_analyzer measures until three agree within --stability
# percent (its default, 10), at most --max-trials windows (default 10).
#
# Leaves DIR/perf_analyzer.csv (perf_analyzer's verbose CSV, one row per cell, protocol and model
# first), DIR/perf_analyzer.json (the same rows as objects), DIR/logs/PROTOCOL-MODEL-cN.log
# (perf_analyzer's own report of each cell, its "Server:" section included) and DIR/machine.json;
# DIR defaults to bench-results/perf-analyzer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
models="iris mlp-medium convnet" protocols="http grpc" levels="1 8 64"
seconds=2 trials=10 stability=10 server="" out=bench-results/perf-analyzer
usage="usage: $0 [--models M] [--protocols P] [--concurrency C] [--seconds S] [--max-trials N] [--stability PCT] [--server H:P,H:P] [--out DIR]"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value; $usage"
  case "$1" in
    --models) models=$2 ;;
    --protocols) protocols=$2 ;;
    --concurrency) levels=$2 ;;
    --seconds) seconds=$2 ;;
    --max-trials) trials=$2 ;;
    --stability) stability=$2 ;;
    --server) server=$2 ;;
    --out) out=$2 ;;
    *) die "unknown argument '$1'; $usage" ;;
  esac
  shift 2
done
for p in $protocols; do
  [ "$p" = http ] || [ "$p" = grpc ] || die "unknown protocol '$p' in --protocols: http or grpc"
done
need_perf_analyzer
mkdir -p "$out/logs"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
if [ -n "$server" ]; then
  [[ $server == *:*,*:* ]] || die "--server takes HOST:HTTP_PORT,HOST:GRPC_PORT, not '$server'"
  http_target=${server%%,*} grpc_target=${server#*,}
else
  jar=modelkeeper-cli/target/modelkeeper.jar
  [ -f "$jar" ] || ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
  start_jar s "$jar" "$work/logs" --cache-dir "$MK_CACHE" --pin "$(echo "$models" | tr ' ' ',')"
  http_target=127.0.0.1:$PORT_s grpc_target=127.0.0.1:$GRPC_s
fi
machine_json "scripts/bench-perf-analyzer.sh --models '$models' --protocols '$protocols'" \
  "--concurrency '$levels' --seconds $seconds --max-trials $trials --stability $stability" \
  >"$out/machine.json"
csv=$out/perf_analyzer.csv
rm -f "$csv"
for model in $models; do
  for protocol in $protocols; do
    target=$([ "$protocol" = http ] && echo "$http_target" || echo "$grpc_target")
    for c in $levels; do
      report=$out/logs/$protocol-$model-c$c.log
      log "perf_analyzer: $model over $protocol at $c clients ($target)"
      "${PERF_ANALYZER[@]}" -m "$model" -u "$target" -i "$protocol" --concurrency-range "$c:$c" \
        --measurement-interval "$((seconds * 1000))" --max-trials "$trials" \
        --stability-percentage "$stability" --verbose-csv -f "$work/cell.csv" >"$report" 2>&1 ||
        { tail -20 "$report" >&2; die "perf_analyzer failed ($model, $protocol, $c clients); see $report"; }
      grep -q '^ *Server: *$' "$report" ||
        die "perf_analyzer printed no server-side section for $model over $protocol; see $report"
      [ -f "$csv" ] || { printf 'Protocol,Model,'; head -1 "$work/cell.csv"; } >"$csv"
      tail -n +2 "$work/cell.csv" | sed "s/^/$protocol,$model,/" >>"$csv"
    done
  done
done
python3 - "$csv" "$out/perf_analyzer.json" <<'PY'
import csv, json, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
for row in rows:
    for key, value in row.items():
        try:
            row[key] = float(value) if "." in value else int(value)
        except ValueError:
            pass
with open(sys.argv[2], "w") as f:
    json.dump(rows, f, indent=1)
PY
log "perf_analyzer: $(($(wc -l <"$csv") - 1)) cells in $csv and $out/perf_analyzer.json; reports in $out/logs/"
