#!/usr/bin/env bash
# Where the binary tensor extension overtakes JSON, by payload size. Tool: wrk (one connection,
# a Lua script per prepared body). iris requests whose FP32 input is 16 B (one row), 1 KiB,
# 64 KiB, 1 MiB and 8 MiB (values at FP32's 9 digits in JSON), JSON and binary tensors (answers in
# the same form) to the work tree's jar over loopback, the two forms alternating in rounds.
#
#   scripts/bench-payload.sh [--rounds N] [--seconds S] [--out DIR]
#
# Leaves DIR/payload.csv, DIR/machine.json and DIR/payload.md; DIR defaults to bench-results/payload.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=2 out=bench-results/payload
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR]" ;;
  esac
done
need_wrk
./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-payload.sh --rounds $rounds --seconds $seconds" >"$out/machine.json"
HEAP=2g start_jar s modelkeeper-cli/target/modelkeeper.jar "$work/logs" --cache-dir "$MK_CACHE" --pin iris \
  --max-request-bytes 256MiB
url="http://127.0.0.1:$PORT_s"
rows=(1 64 4096 65536 524288) # 16 B of FP32 per row
for n in "${rows[@]}"; do
  python3 scripts/bench/bodies.py "$url" iris "$n" "$work" >/dev/null
  wrk_lua "$work/$n-JSON.lua" POST application/json "$work/iris-$n.json"
  wrk_lua "$work/$n-binary.lua" POST application/octet-stream "$work/iris-$n.bin" "$(cat "$work/iris-$n.bin.hlen")"
  for form in JSON binary; do run_wrk "$url/v2/models/iris/infer" "$work/$n-$form.lua" 1 1 >/dev/null; done
done
echo "round,bytes,form,rps,p50_ms,p99_ms,requests,non2xx,errors" >"$out/payload.csv"
for ((r = 1; r <= rounds; r++)); do
  for n in "${rows[@]}"; do
    for form in $( ((r % 2)) && echo JSON binary || echo binary JSON); do
      row=$(run_wrk "$url/v2/models/iris/infer" "$work/$n-$form.lua" 1 "$seconds")
      echo "$r,$((n * 16)),$form,$row" | tee -a "$out/payload.csv" >&2
    done
  done
done
stop_jar "$PID_s"
python3 scripts/bench/render.py payload "$out" | tee "$out/payload.md"
log "results in $out"
