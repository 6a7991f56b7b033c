#!/usr/bin/env bash
# Heap the server allocates per inference request (workload 9 of the design's BENCHMARKS.md).
# Tools: h2load (nghttp2, a fixed count of REST requests from one client, HTTP/1.1) and ghz (the
# same for gRPC) send the requests; the JDK's Flight Recorder counts the allocation: jcmd starts a
# recording before the measured requests and stops it after, and `jfr print` reads the
# jdk.ThreadAllocationStatistics events at both ends (every thread's allocated bytes so far). The
# figure is the growth of the server's threads' sum (the recorder's own and the attach thread's
# left out) divided by the requests; the client runs in its own process, so none of its allocation
# counts. Inputs: mlp-medium with 4,096 rows (1 MiB of FP32) as binary REST, JSON REST and gRPC;
# 53,248 rows (13 MiB of FP32, a ~29 MiB JSON body) as JSON REST.
#
#   scripts/bench-request-heap.sh [--requests N] [--warmup N] [--out DIR]
#
# Leaves DIR/heap.csv, DIR/machine.json and DIR/heap.md; DIR defaults to bench-results/request-heap.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
requests=50 warmup=20 out=bench-results/request-heap
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--requests N] [--warmup N] [--out DIR]" ;;
  esac
done
need_h2load
need_ghz
./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-request-heap.sh --requests $requests --warmup $warmup" >"$out/machine.json"
HEAP=2g start_jar s modelkeeper-cli/target/modelkeeper.jar "$work/logs" --cache-dir "$MK_CACHE" \
  --pin mlp-medium --max-request-bytes 256MiB
url="http://127.0.0.1:$PORT_s"
python3 scripts/bench/bodies.py "$url" mlp-medium 4096 "$work" >/dev/null
python3 scripts/bench/bodies.py "$url" mlp-medium 53248 "$work" >/dev/null

# send FORM ROWS N: N requests, one at a time
send() {
  local form=$1 rows=$2 n=$3 stem=$work/mlp-medium-$2
  case $form in
    JSON) h2load --h1 -n "$n" -c 1 -m 1 -d "$stem.json" -H 'Content-Type: application/json' "$url/v2/models/mlp-medium/infer" ;;
    binary) h2load --h1 -n "$n" -c 1 -m 1 -d "$stem.bin" -H 'Content-Type: application/octet-stream' \
      -H "Inference-Header-Content-Length: $(cat "$stem.bin.hlen")" "$url/v2/models/mlp-medium/infer" ;;
    gRPC) "$GHZ" --insecure "${PROTO_DIRS[@]}" --proto grpc_service.proto -c 1 -n "$n" \
      --call inference.GRPCInferenceService/ModelInfer --binary-file "$stem.grpc" "127.0.0.1:$GRPC_s" ;;
  esac >"$work/send.log" 2>&1 || { cat "$work/send.log" >&2; die "$form requests failed"; }
  # every request must have been answered 2xx (h2load) or OK (ghz)
  grep -qE "succeeded, 0 failed, 0 errored|\[OK\] +$n " "$work/send.log" ||
    { cat "$work/send.log" >&2; die "not every $form request succeeded"; }
}

echo "form,rows,body_bytes,tensor_bytes,requests,allocated_per_request" >"$out/heap.csv"
for cell in binary:4096 JSON:4096 gRPC:4096 JSON:53248; do
  form=${cell%:*} rows=${cell#*:}
  send "$form" "$rows" "$warmup"
  jcmd "$PID_s" JFR.start name=heap settings=default >/dev/null
  send "$form" "$rows" "$requests"
  jcmd "$PID_s" JFR.stop name=heap filename="$work/heap.jfr" >/dev/null
  jfr print --json --events jdk.ThreadAllocationStatistics "$work/heap.jfr" >"$work/heap.json"
  body=$(stat -c %s "$work/mlp-medium-$rows.$([ "$form" = JSON ] && echo json || echo bin)")
  python3 - "$work/heap.json" "$form" "$rows" "$body" "$requests" <<'PY' | tee -a "$out/heap.csv" >&2
import json, sys
events = json.load(open(sys.argv[1]))["recording"]["events"]
first, last = {}, {}
times = sorted({e["values"]["startTime"] for e in events})
for e in events:
    v = e["values"]
    name = (v["thread"] or {}).get("javaName") or ""
    if name.startswith("JFR ") or name == "Attach Listener":
        continue
    tid = v["thread"]["javaThreadId"]
    (first if v["startTime"] == times[0] else last)[tid] = v["allocated"]
grown = sum(a - first.get(t, 0) for t, a in last.items())
form, rows, body, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print(f"{form},{rows},{body},{rows * 64 * 4},{n},{grown / n:.0f}")
PY
done
stop_jar "$PID_s"
python3 scripts/bench/render.py heap "$out" | tee "$out/heap.md"
log "results in $out"
