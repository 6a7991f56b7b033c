#!/usr/bin/env bash
# NVIDIA's Model Analyzer (PyPI triton-model-analyzer, its configuration search) against the
# packaged server in remote mode, as a Triton user runs it: Triton's default ports (HTTP 8000,
# gRPC 8001, metrics 8002; triton_metrics_url left at its default), the server started without
# flags but the ports, Model Analyzer loading each configuration it tries with a config override
# and measuring it with perf_analyzer. The search: the model's instance count 1 and 2 (instance
# count is how many runs of the model go at once), one concurrency, one batch size. Both venvs
# (Model Analyzer, and perf_analyzer from the tritonclient wheel) are installed under
# ~/.cache/modelkeeper/ when missing. About a minute on 2 cores.
#
#   scripts/model-analyzer.sh [--model NAME] [--out DIR] [--no-build]
#
# Leaves DIR (default bench-results/model-analyzer) with Model Analyzer's export (results/*.csv,
# reports) and model-analyzer.log; exits non-zero unless the inference results hold at least two
# measured configurations with different instance counts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
MA_VERSION=1.58.0
MA_VENV=$MK_CACHE/model-analyzer-venv-$MA_VERSION
model=iris out=bench-results/model-analyzer build=true
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=false; shift ;;
    *) die "unknown argument '$1'; usage: $0 [--model NAME] [--out DIR] [--no-build]" ;;
  esac
done
need_perf_analyzer
if [ ! -x "$MA_VENV/bin/model-analyzer" ]; then
  log "installing triton-model-analyzer==$MA_VERSION into $MA_VENV"
  { python3 -m venv "$MA_VENV" && "$MA_VENV/bin/pip" install -q "triton-model-analyzer==$MA_VERSION"; } >&2 ||
    die "could not install triton-model-analyzer==$MA_VERSION into $MA_VENV"
fi
for port in 8000 8001 8002; do
  python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',$port))" 2>/dev/null ||
    die "port $port is in use: Model Analyzer's remote mode reaches the server on Triton's ports 8000-8002"
done
$build && ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# the server with Triton's ports (its defaults but for gRPC, which is given), the bundled demo models
java -Xmx1g -jar modelkeeper-cli/target/modelkeeper.jar serve --port 8000 --grpc-port 8001 \
  --cache-dir "$work/cache" >"$out/server.out" 2>"$out/server.err" &
server=$!
for ((t = 0; t < 240; t++)); do
  grep -q '^Ready\.' "$out/server.out" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { tail -20 "$out/server.err" >&2; die "the server exited before Ready."; }
  sleep 0.5
done
grep -q '^Ready\.' "$out/server.out" || die "the server was not ready after 120 s"
pa_dir=$(dirname "${PERF_ANALYZER[-1]}")
cudart=${PERF_ANALYZER[1]#LD_LIBRARY_PATH=}
mkdir -p "$work/models" # no config.pbtxt here: Model Analyzer asks the server for the model's config
cat >"$work/profile.yaml" <<EOF
model_repository: $work/models
triton_launch_mode: remote
triton_http_endpoint: localhost:8000
triton_grpc_endpoint: localhost:8001
client_protocol: grpc
perf_analyzer_path: $pa_dir/perf_analyzer
perf_analyzer_flags:
  measurement-interval: 1000
export_path: $out
output_model_repository_path: $work/output-models
override_output_model_repository: true
checkpoint_directory: $work/checkpoints
run_config_search_disable: true
collect_cpu_metrics: true
dcgm_disable: true
skip_detailed_reports: true
profile_models:
  $model:
    cpu_only: true
    model_config_parameters:
      instance_group:
        - kind: KIND_CPU
          count: [1, 2]
    parameters:
      concurrency: [4]
      batch_sizes: [1]
EOF
log "Model Analyzer $MA_VERSION profiling '$model' (instance count 1 and 2) in remote mode"
status=0
(cd "$work" && LD_LIBRARY_PATH="$cudart" PATH="$pa_dir:$PATH" timeout 600 \
  "$MA_VENV/bin/model-analyzer" profile -f "$work/profile.yaml") >"$out/model-analyzer.log" 2>&1 ||
  status=$?
[ "$status" -eq 0 ] || { tail -40 "$out/model-analyzer.log" >&2; die "model-analyzer profile failed ($status)"; }
results=$out/results/metrics-model-inference.csv
[ -f "$results" ] || { tail -40 "$out/model-analyzer.log" >&2; die "Model Analyzer wrote no $results"; }
cat "$results"
# two measured configurations whose instance groups differ
python3 - "$results" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {r["Instance Group"] for r in rows if float(r.get("Throughput (infer/sec)") or 0) > 0}
configs = {r["Model Config Path"] for r in rows}
print(f"{len(rows)} measured rows, configurations {sorted(configs)}, instance groups {sorted(groups)}")
if len(configs) < 2 or len(groups) < 2:
    sys.exit("Model Analyzer did not measure two configurations with different instance counts")
EOF
