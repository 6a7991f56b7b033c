#!/usr/bin/env bash
# NVIDIA's perf_analyzer, unmodified, against the fast paths on Triton's "simple"-shaped model:
# system shared memory over HTTP and gRPC (--shared-memory system: perf_analyzer registers its
# regions, places every input and output in them and unregisters at the end) and gRPC streaming
# (--streaming), each a short run that must go to the end. perf_analyzer comes from the tritonclient
# wheel (installed into ~/.cache/modelkeeper/ when missing, as for the protocol benchmarks); the
# models are written by scripts/bench/fast_models.py. About a minute; no figure here is a
# benchmark (the machine is shared), only "it runs".
#
#   scripts/perf-fast-paths.sh [--jar JAR] [--out DIR]
#
# Exits non-zero naming the run that failed; DIR (default bench-results/perf-fast-paths) keeps each
# run's perf_analyzer output and the server's log.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
jar=modelkeeper-cli/target/modelkeeper.jar out=bench-results/perf-fast-paths
while [ $# -gt 0 ]; do
  case "$1" in
    --jar) jar=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--jar JAR] [--out DIR]" ;;
  esac
done
need_perf_analyzer
[ -f "$jar" ] || ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
python3 scripts/bench/fast_models.py "$work/repo"
start_jar s "$jar" "$out" --repository "$work/repo" --cache-dir "$work/cache"

# pa NAME ARGS...: one perf_analyzer run of 2 short windows at concurrency 2, which must succeed
pa() {
  local name=$1
  shift
  log "perf_analyzer: $name"
  if ! timeout 300 "${PERF_ANALYZER[@]}" -m simple --concurrency-range 2 \
    --measurement-interval 2000 --max-trials 3 --stability-percentage 999 "$@" \
    >"$out/$name.txt" 2>&1; then
    tail -20 "$out/$name.txt" >&2
    die "perf_analyzer $name did not run to the end (see $out/$name.txt)"
  fi
  grep -E "Throughput|Avg latency" "$out/$name.txt" | head -2 >&2
}
pa http-shm -i http -u "127.0.0.1:$PORT_s" --shared-memory system
pa grpc-shm -i grpc -u "127.0.0.1:$GRPC_s" --shared-memory system
pa grpc-streaming -i grpc -u "127.0.0.1:$GRPC_s" --streaming
pa grpc-streaming-shm -i grpc -u "127.0.0.1:$GRPC_s" --streaming --shared-memory system
# every region perf_analyzer registered is gone again
regions=$(curl -sf "http://127.0.0.1:$PORT_s/v2/systemsharedmemory/status")
[ "$regions" = "[]" ] || die "regions left registered after perf_analyzer: $regions"
stop_jar "$PID_s"
log "perf_analyzer ran to the end: HTTP and gRPC shared memory, gRPC streaming"
