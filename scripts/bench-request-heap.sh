#!/usr/bin/env bash
# Heap the server allocates per inference request (workload 9 of the design's BENCHMARKS.md).
# Tools: h2load (nghttp2, a fixed count of REST requests from one client, HTTP/1.1) and ghz (the
# same for gRPC) send the requests; the JDK's Flight Recorder counts the allocation: jcmd starts a
# recording before the measured requests and stops it after, and `jfr print` reads the
# jdk.ThreadAllocationStatistics events at both ends (every thread's allocated bytes so far). The
# figure is the growth of the server's threads' sum (the recorder's own and the attach thread's
# left out) divided by the requests; the client runs in its own process, so none of its allocation
# counts. Inputs: 21 convnet images (1,032,192 bytes of FP32; the answer 21 x 10 scores) as binary
# REST, JSON REST and gRPC; mlp-medium with 53,248 rows (13 MiB of FP32, a ~29 MiB JSON body) as
# JSON REST.
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
  --pin convnet,mlp-medium --max-request-bytes 256MiB
url="http://127.0.0.1:$PORT_s"
python3 scripts/bench/bodies.py "$url" convnet 21 "$work" >/dev/null
python3 scripts/bench/bodies.py "$url" mlp-medium 53248 "$work" >/dev/null

# send FORM MODEL ROWS N: N requests, one at a time
send() {
  local form=$1 model=$2 n=$4 stem=$work/$2-$3
  case $form in
    JSON) h2load --h1 -n "$n" -c 1 -m 1 -d "$stem.json" -H 'Content-Type: application/json' "$url/v2/models/$model/infer" ;;
    binary) h2load --h1 -n "$n" -c 1 -m 1 -d "$stem.bin" -H 'Content-Type: application/octet-stream' \
      -H "Inference-Header-Content-Length: $(cat "$stem.bin.hlen")" "$url/v2/models/$model/infer" ;;
    gRPC) "$GHZ" --insecure "${PROTO_DIRS[@]}" --proto grpc_service.proto -c 1 -n "$n" \
      --call inference.GRPCInferenceService/ModelInfer --binary-file "$stem.grpc" "127.0.0.1:$GRPC_s" ;;
  esac >"$work/send.log" 2>&1 || { cat "$work/send.log" >&2; die "$form requests failed"; }
  # every request must have been answered 2xx (h2load) or OK (ghz)
  grep -qE "succeeded, 0 failed, 0 errored|\[OK\] +$n " "$work/send.log" ||
    { cat "$work/send.log" >&2; die "not every $form request succeeded"; }
}

echo "form,model,rows,body_bytes,tensor_bytes,requests,allocated_per_request" >"$out/heap.csv"
for cell in binary:convnet:21 JSON:convnet:21 gRPC:convnet:21 JSON:mlp-medium:53248; do
  IFS=: read -r form model rows <<<"$cell"
  send "$form" "$model" "$rows" "$warmup"
  jcmd "$PID_s" JFR.start name=heap settings=default >/dev/null
  send "$form" "$model" "$rows" "$requests"
  jcmd "$PID_s" JFR.stop name=heap filename="$work/heap.jfr" >/dev/null
  jfr print --json --events jdk.ThreadAllocationStatistics "$work/heap.jfr" >"$work/heap.json"
  body=$(stat -c %s "$work/$model-$rows.$([ "$form" = JSON ] && echo json || echo bin)")
  tensor=$((rows * $([ "$model" = convnet ] && echo 49152 || echo 256)))
  python3 - "$work/heap.json" "$form,$model,$rows,$body,$tensor" "$requests" <<'PY' | tee -a "$out/heap.csv" >&2
import json, sys
events = json.load(open(sys.argv[1]))["recording"]["events"]
# two batches, one when the recording began and one when it stopped: split at the largest gap
secs = lambda t: int(t[11:13]) * 3600 + int(t[14:16]) * 60 + float(t[17:].rstrip("Z"))
times = sorted({e["values"]["startTime"] for e in events}, key=secs)
split = times[max(range(1, len(times)), key=lambda i: secs(times[i]) - secs(times[i - 1]))]
first, last = {}, {}
for e in events:
    v = e["values"]
    name = (v["thread"] or {}).get("javaName") or ""
    if name.startswith("JFR ") or name == "Attach Listener":
        continue
    (first if secs(v["startTime"]) < secs(split) else last)[v["thread"]["javaThreadId"]] = v["allocated"]
grown = sum(a - first.get(t, 0) for t, a in last.items())
n = int(sys.argv[3])
print(f"{sys.argv[2]},{n},{grown / n:.0f}")
PY
done
stop_jar "$PID_s"
python3 scripts/bench/render.py heap "$out" | tee "$out/heap.md"
log "results in $out"
