#!/usr/bin/env bash
# ModelKeeper's Python backend against NVIDIA Triton 2.51's, in one run: the same model.py files
# (scripts/bench/python-models: add_sub on FP32 [16], and a BLS model calling the demo's iris ONNX
# model) and the same interpreter (Debian's python3 with python3-numpy, which Triton's Python
# backend stub runs), perf_analyzer over HTTP and gRPC at each concurrency, the two servers
# alternating cell by cell and round by round. Triton is built here with
# ../shared/peers/triton/setup.sh (about a minute, once) unless --triton names a built one.
#
#   scripts/bench-python.sh [--rounds N] [--seconds S] [--concurrency "1 8 64"]
#       [--models "add_sub bls"] [--triton DIR] [--out DIR]
#
# Leaves DIR/python.csv (one row per cell: round, server, protocol, model, concurrency,
# throughput, p50/p99 latency), DIR/cells/ (each cell's perf_analyzer output), DIR/machine.json and
# DIR/python.md; DIR defaults to bench-results/python.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=2 seconds=2 levels="1 8 64" models="add_sub bls" triton="" out=bench-results/python
usage="usage: $0 [--rounds N] [--seconds S] [--concurrency C] [--models M] [--triton DIR] [--out DIR]"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value; $usage"
  case "$1" in
    --rounds) rounds=$2 ;;
    --seconds) seconds=$2 ;;
    --concurrency) levels=$2 ;;
    --models) models=$2 ;;
    --triton) triton=$2 ;;
    --out) out=$2 ;;
    *) die "unknown argument '$1'; $usage" ;;
  esac
  shift 2
done
peer=$(cd .. && pwd)/shared/peers/triton
if [ -z "$triton" ]; then
  triton=$HOME/.cache/triton-peer
  if [ ! -x "$triton/start-triton.sh" ]; then
    [ -f "$peer/setup.sh" ] || die "no Triton: $peer/setup.sh is missing; give a built one with --triton DIR"
    log "building Triton 2.51 into $triton (about a minute)"
    bash "$peer/setup.sh" "$triton" >&2 || die "$peer/setup.sh failed"
  fi
fi
[ -x "$triton/start-triton.sh" ] || die "$triton/start-triton.sh is missing; run $peer/setup.sh $triton"
python=/usr/bin/python3
"$python" -c 'import numpy' 2>/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy >&2 ||
  die "$python has no numpy: apt-get install -y python3-numpy"
need_perf_analyzer
jar=modelkeeper-cli/target/modelkeeper.jar
[ -f "$jar" ] && [ -f modelkeeper-benchmarks/target/benchmarks.jar ] ||
  ./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
mkdir -p "$out/cells"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# one repository for both: the Python models and the demo's iris with a Triton config
repo=$work/models
cp -r scripts/bench/python-models "$repo"
# the demo repository, written by the benchmarks jar's ModelAlone dependency when missing
java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.memory.ModelAlone --demo \
  "$MK_CACHE/demo-repository" >/dev/null
mkdir -p "$repo/iris/1"
cp "$MK_CACHE/demo-repository/iris/1/model.onnx" "$repo/iris/1/"
cat >"$repo/iris/config.pbtxt" <<'PBTXT'
platform: "onnxruntime_onnx"
max_batch_size: 0
input [ { name: "input" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]
output [ { name: "probabilities" data_type: TYPE_FP32 dims: [ -1, 3 ] },
         { name: "label" data_type: TYPE_INT64 dims: [ -1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
PBTXT

HEAP=512m start_jar mk "$jar" "$work/logs" --repository "$repo" --cache-dir "$work/mk-cache" \
  --python "$python" --pin "add_sub,bls,iris"
tport=$(free_port) tgrpc=$(free_port) tmetrics=$(free_port)
"$triton/start-triton.sh" "$repo" "$tport" "$tgrpc" "$tmetrics" >"$work/logs/triton.log" 2>&1 &
tpid=$!
for ((t = 0; t < 240; t++)); do
  curl -sf "http://127.0.0.1:$tport/v2/health/ready" >/dev/null && break
  kill -0 "$tpid" 2>/dev/null || { tail -30 "$work/logs/triton.log" >&2; die "Triton exited before ready"; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$tport/v2/health/ready" >/dev/null || die "Triton not ready after 120 s"
log "triton: pid $tpid, http $tport, grpc $tgrpc"
machine_json "scripts/bench-python.sh --rounds $rounds --seconds $seconds --concurrency '$levels'" >"$out/machine.json"

csv=$out/python.csv
echo "round,server,protocol,model,concurrency,stability_pct,infer_per_sec,p50_us,p99_us" >"$csv"
for ((r = 1; r <= rounds; r++)); do
  order="mk triton"
  ((r % 2 == 0)) && order="triton mk"
  for model in $models; do
    for protocol in http grpc; do
      for c in $levels; do
        for s in $order; do
          if [ "$s" = mk ]; then port=$PORT_mk grpc=$GRPC_mk; else port=$tport grpc=$tgrpc; fi
          url=127.0.0.1:$([ "$protocol" = http ] && echo "$port" || echo "$grpc")
          cell=$out/cells/r$r-$s-$protocol-$model-c$c
          # perf_analyzer's own stability criterion (10%); a cell that cannot meet it is measured
          # again at 50% and marked so
          stability=10
          for stability in 10 50; do
            rm -f "$cell.csv"
            "${PERF_ANALYZER[@]}" -m "$model" -u "$url" -i "$protocol" \
              --concurrency-range "$c" --measurement-interval "$((seconds * 1000))" --max-trials 10 \
              --stability-percentage "$stability" -f "$cell.csv" >"$cell-s$stability.log" 2>&1 && break
            log "$s $protocol $model c$c: no stable measurement at $stability% (see $cell-s$stability.log)"
          done
          if [ -f "$cell.csv" ]; then
            python3 - "$cell.csv" "$r" "$s" "$protocol" "$model" "$c" "$stability" >>"$csv" <<'PY'
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
print(",".join(sys.argv[2:8] + [row["Inferences/Second"], row["p50 latency"], row["p99 latency"]]))
PY
          fi
          log "round $r $s $protocol $model c$c: $(tail -1 "$csv" | cut -d, -f6-9)"
        done
      done
    done
  done
done
python3 - "$csv" >"$out/python.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["model"], r["protocol"], int(r["concurrency"])), {}).setdefault(r["server"], []).append(r)
print("Medians over the rounds; * marks a server that met perf_analyzer's stability criterion only at 50%"
      " (not its default 10%) in some round of the cell.\n")
print("| model | protocol | clients | ModelKeeper infer/s | Triton infer/s | ratio | ModelKeeper p99 ms | Triton p99 ms |")
print("|---|---|---|---|---|---|---|---|")
for (m, p, c), by in sorted(cells.items()):
    med = lambda s, k: statistics.median(float(x[k]) for x in by.get(s, [])) if by.get(s) else float("nan")
    star = lambda s: "*" if any(x["stability_pct"] != "10" for x in by.get(s, [])) else ""
    mk, tr = med("mk", "infer_per_sec"), med("triton", "infer_per_sec")
    print(f"| {m} | {p} | {c} | {mk:,.0f}{star('mk')} | {tr:,.0f}{star('triton')} | {mk / tr:.2f}x |"
          f" {med('mk', 'p99_us') / 1e3:.2f} | {med('triton', 'p99_us') / 1e3:.2f} |")
PY
cat "$out/python.md"
log "results in $out"
