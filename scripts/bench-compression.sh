#!/usr/bin/env bash
# What compression costs the server: JSON inference requests of about 64 KiB and 1 MiB (FP32
# tensors for an identity model, answered with as much JSON) sent plain, gzip- and
# deflate-compressed (Content-Encoding), and gzip-compressed asking for a gzip answer
# (Accept-Encoding), one client with wrk; the server's CPU per request from /proc/<pid>/stat beside
# requests/s. One server (the work tree's jar, models from scripts/bench/fast_models.py) on
# loopback; interleaved rounds after an unrecorded warm-up, the modes' order rotating per round. About
# 2 minutes.
#
#   scripts/bench-compression.sh [--rounds N] [--seconds S] [--out DIR] [--jar JAR]
#
# Leaves DIR/compression.csv (every round and cell), DIR/machine.json and DIR/compression.md
# (medians, each mode's CPU per request against plain at the same size); DIR defaults to
# bench-results/compression.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=3 seconds=5 out=bench-results/compression jar=modelkeeper-cli/target/modelkeeper.jar
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jar) jar=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--out DIR] [--jar JAR]" ;;
  esac
done
need_wrk
[ -f "$jar" ] || ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-compression.sh --rounds $rounds --seconds $seconds" >"$out/machine.json"
python3 scripts/bench/fast_models.py "$work/repo"
start_jar s "$jar" "$work/logs" --repository "$work/repo" --cache-dir "$work/cache" --pin identity
url="http://127.0.0.1:$PORT_s/v2/models/identity/infer"

# the bodies: SIZE.json plain, SIZE.gzip and SIZE.deflate compressed
for size in 65536 1048576; do
  python3 - "$work" "$size" <<'PY'
import gzip, json, random, sys, zlib
work, size = sys.argv[1], int(sys.argv[2])
random.seed(size)
n = size // 11  # about 11 characters a float
data = [round(random.uniform(-10, 10), 6) for _ in range(n)]
body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [n], "data": data}]},
                  separators=(",", ":")).encode()
open("%s/%d.json" % (work, size), "wb").write(body)
open("%s/%d.gzip" % (work, size), "wb").write(gzip.compress(body, 6))
open("%s/%d.deflate" % (work, size), "wb").write(zlib.compress(body, 6))
PY
done

# lua MODE SIZE: a wrk script sending SIZE's body in MODE
lua() {
  local mode=$1 size=$2 file
  case "$mode" in
    plain) file=$work/$size.json ;;
    gzip | "gzip + gzip answer") file=$work/$size.gzip ;;
    deflate) file=$work/$size.deflate ;;
  esac
  {
    echo 'wrk.method = "POST"'
    echo 'wrk.headers["Content-Type"] = "application/json"'
    case "$mode" in
      gzip) echo 'wrk.headers["Content-Encoding"] = "gzip"' ;;
      deflate) echo 'wrk.headers["Content-Encoding"] = "deflate"' ;;
      "gzip + gzip answer") echo 'wrk.headers["Content-Encoding"] = "gzip"'
        echo 'wrk.headers["Accept-Encoding"] = "gzip"' ;;
    esac
    echo "local f = assert(io.open(\"$file\", \"rb\")); wrk.body = f:read(\"*a\"); f:close()"
    cat scripts/bench/done.lua
  } >"$work/cell.lua"
}

hz=$(getconf CLK_TCK)
echo "round,size,mode,rps,p50_ms,p99_ms,requests,non2xx,cpu_ms_per_request" >"$out/compression.csv"
cells=()
for size in 65536 1048576; do
  for m in plain gzip deflate "gzip + gzip answer"; do cells+=("$size|$m"); done
done
for cell in "${cells[@]}"; do # warm-up, unrecorded: the JIT, the model's first runs
  IFS='|' read -r size mode <<<"$cell"
  lua "$mode" "$size"
  run_wrk "$url" "$work/cell.lua" 1 1 >/dev/null
done
for ((r = 1; r <= rounds; r++)); do
  n=${#cells[@]}
  for ((i = 0; i < n; i++)); do
    IFS='|' read -r size mode <<<"${cells[$(((i + r - 1) % n))]}"
    log "round $r/$rounds: $size bytes, $mode"
    lua "$mode" "$size"
    before=$(cpu_ticks "$PID_s")
    row=$(run_wrk "$url" "$work/cell.lua" 1 "$seconds")
    after=$(cpu_ticks "$PID_s")
    IFS=, read -r rps p50 p99 requests non2xx errors <<<"$row"
    [ "$non2xx" = 0 ] && [ "$errors" = 0 ] || die "$mode at $size: $non2xx non-2xx answers, $errors errors"
    cpu=$(python3 -c "print('%.3f' % (($after - $before) * 1000 / $hz / max(1, $requests)))")
    echo "$r,$size,$mode,$rps,$p50,$p99,$requests,$non2xx,$cpu" >>"$out/compression.csv"
  done
done
stop_jar "$PID_s"
python3 - "$out/compression.csv" >"$out/compression.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((int(r["size"]), r["mode"]), []).append(r)
med = {k: {f: statistics.median(float(x[f]) for x in v) for f in ("rps", "p50_ms", "cpu_ms_per_request")}
       for k, v in cells.items()}
print("| body | mode | requests/s | p50 (ms) | server CPU per request (ms) | vs plain |")
print("|---:|---|---:|---:|---:|---:|")
for (size, mode), f in sorted(med.items()):
    base = med[(size, "plain")]["cpu_ms_per_request"]
    ratio = "" if mode == "plain" or base == 0 else "%.2fx" % (f["cpu_ms_per_request"] / base)
    print("| %d KiB | %s | %.0f | %.2f | %.3f | %s |" % (size // 1024, mode, f["rps"], f["p50_ms"], f["cpu_ms_per_request"], ratio))
PY
cat "$out/compression.md"
