# shellcheck shell=bash
# Sourced by scripts/bench-*.sh: start and stop server jars on loopback, install the load tools
# (wrk and h2load from Debian, ghz with `go install`, perf_analyzer and matplotlib in venvs under
# ~/.cache/modelkeeper/) and run them, one CSV row per measured cell. The tools measure and keep
# the statistics (their own HdrHistogram percentiles); these functions only start them and copy
# their figures out.

MK_CACHE=${MODELKEEPER_CACHE:-$HOME/.cache/modelkeeper}
MK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GHZ_VERSION=v0.121.0
GHZ=$MK_CACHE/ghz-$GHZ_VERSION/ghz
TRITONCLIENT_VERSION=2.51.0
CUDA_RUNTIME_VERSION=12.9.79
PA_VENV=$MK_CACHE/perf-analyzer-venv-$TRITONCLIENT_VERSION
MATPLOTLIB_VERSION=3.9.2
PLOT_VENV=$MK_CACHE/plot-venv-matplotlib-$MATPLOTLIB_VERSION
PROTO_DIRS=(-i "$MK_ROOT/modelkeeper-server/src/main/protobuf,$MK_ROOT/modelkeeper-onnx/src/main/protobuf")

die() { echo "$*" >&2; exit 1; }
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# apt-get install PACKAGE when COMMAND is missing (as root), else fail naming the package.
need_debian() {
  local command=$1 package=$2
  command -v "$command" >/dev/null && return
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    log "installing $package (Debian) for $command"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >&2; }
  fi
  command -v "$command" >/dev/null || die "$command is missing: apt-get install -y $package"
}

need_wrk() { need_debian wrk wrk; }
need_h2load() { need_debian h2load nghttp2-client; }

# ghz from the Go module proxy, cached under ~/.cache/modelkeeper/ghz-VERSION/.
need_ghz() {
  [ -x "$GHZ" ] && return
  command -v go >/dev/null || die "ghz is missing and there is no Go to build it (go install github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION)"
  log "installing ghz $GHZ_VERSION into $(dirname "$GHZ")"
  GOBIN=$(dirname "$GHZ") go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" >&2 ||
    die "could not install ghz $GHZ_VERSION with go install"
  [ -x "$GHZ" ] || die "go install did not leave $GHZ"
}

# NVIDIA's perf_analyzer, the binary inside the tritonclient wheel (the newest that runs on Debian
# 12's glibc), with the CUDA runtime library it links (no GPU is used) and Debian's libb64.
need_perf_analyzer() {
  need_debian_lib libb64.so.0d libb64-0d
  if [ ! -x "$PA_VENV/bin/perf_analyzer" ]; then
    log "installing perf_analyzer (tritonclient==$TRITONCLIENT_VERSION) into $PA_VENV"
    python3 -m venv "$PA_VENV" >&2 &&
      "$PA_VENV/bin/pip" install -q "tritonclient==$TRITONCLIENT_VERSION" "nvidia-cuda-runtime-cu12==$CUDA_RUNTIME_VERSION" >&2 ||
      die "could not install tritonclient==$TRITONCLIENT_VERSION into $PA_VENV"
  fi
  local cudart
  cudart=$(dirname "$(find "$PA_VENV" -name 'libcudart.so.12' | head -1)")
  PERF_ANALYZER=(env "LD_LIBRARY_PATH=$cudart${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$PA_VENV/bin/perf_analyzer")
  "${PERF_ANALYZER[@]}" --version >/dev/null 2>&1 || "${PERF_ANALYZER[@]}" --help >/dev/null 2>&1 ||
    die "perf_analyzer in $PA_VENV does not start"
}

need_debian_lib() {
  ldconfig -p | grep -q "$1" && return
  [ "$(id -u)" -eq 0 ] || die "$1 is missing: apt-get install -y $2"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >&2; }
}

# A Python with matplotlib (pinned) for the charts; prints its path.
plot_python() {
  if [ ! -x "$PLOT_VENV/bin/python" ]; then
    log "installing matplotlib==$MATPLOTLIB_VERSION into $PLOT_VENV"
    { python3 -m venv "$PLOT_VENV" && "$PLOT_VENV/bin/pip" install -q "matplotlib==$MATPLOTLIB_VERSION"; } >&2 ||
      die "could not install matplotlib==$MATPLOTLIB_VERSION into $PLOT_VENV"
  fi
  echo "$PLOT_VENV/bin/python"
}

# The CPU time a process has used so far (user + system), in clock ticks (/proc/PID/stat).
cpu_ticks() {
  awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_jar NAME JAR LOGDIR [serve options...]: starts `java -jar JAR serve` on free HTTP and gRPC
# ports and waits for its `Ready.` line. Sets PID_<NAME>, PORT_<NAME> and GRPC_<NAME>. The heap is
# $HEAP (default 1g).
start_jar() {
  local name=$1 jar=$2 logs=$3
  shift 3
  local port grpc pid
  port=$(free_port)
  grpc=$(free_port)
  mkdir -p "$logs"
  # Triton's metrics port on a free port: a variable, which jars without that flag ignore
  MODELKEEPER_METRICS_PORT=0 java "-Xmx${HEAP:-1g}" -jar "$jar" serve --host 127.0.0.1 --port "$port" --grpc-port "$grpc" "$@" \
    >"$logs/$name.out" 2>"$logs/$name.err" &
  pid=$!
  for ((t = 0; t < 240; t++)); do
    grep -q '^Ready\.' "$logs/$name.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { tail -20 "$logs/$name.err" >&2; die "$name ($jar) exited before Ready."; }
    sleep 0.5
  done
  grep -q '^Ready\.' "$logs/$name.out" || { kill "$pid"; die "$name ($jar) not ready after 120 s"; }
  printf -v "PID_${name//[^A-Za-z0-9_]/_}" '%s' "$pid"
  printf -v "PORT_${name//[^A-Za-z0-9_]/_}" '%s' "$port"
  printf -v "GRPC_${name//[^A-Za-z0-9_]/_}" '%s' "$grpc"
  log "$name: pid $pid, http $port, grpc $grpc ($jar)"
}

stop_jar() {
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# wrk_lua OUT.lua METHOD CONTENT_TYPE BODY_FILE [HEADER_LENGTH]: a wrk script that sends BODY_FILE
# (binary tensors when HEADER_LENGTH is given) and, when done, prints one JSON line of wrk's own
# figures: requests/s, its latency percentiles, non-2xx answers and socket errors.
wrk_lua() {
  local out=$1 method=$2 type=$3 body=${4:-} header=${5:-}
  {
    echo "wrk.method = \"$method\""
    [ -n "$type" ] && echo "wrk.headers[\"Content-Type\"] = \"$type\""
    [ -n "$header" ] && echo "wrk.headers[\"Inference-Header-Content-Length\"] = \"$header\""
    [ -n "$body" ] && echo "local f = assert(io.open(\"$body\", \"rb\")); wrk.body = f:read(\"*a\"); f:close()"
    cat "$MK_ROOT/scripts/bench/done.lua"
  } >"$out"
}

# run_wrk URL LUA CONNECTIONS SECONDS: prints `rps,p50_ms,p99_ms,requests,non2xx,errors`.
run_wrk() {
  local url=$1 lua=$2 c=$3 seconds=$4
  local threads=$((c < 2 ? 1 : 2))
  wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 30s -s "$lua" "$url" |
    python3 -c 'import json,sys
j=[json.loads(l) for l in sys.stdin if l.startswith("{")][-1]
print("%.1f,%.3f,%.3f,%d,%d,%d" % (j["rps"], j["p50_us"]/1e3, j["p99_us"]/1e3, j["requests"], j["non2xx"], j["errors"]))'
}

# run_ghz PORT CALL CONCURRENCY SECONDS [ghz options...]: prints the same six fields as run_wrk,
# from ghz's JSON report (its own percentiles): calls answered OK per second, and calls not
# answered OK as non-2xx, less those ghz itself cut off when its duration ended (one per worker
# at most, "use of closed network connection").
run_ghz() {
  local port=$1 call=$2 c=$3 seconds=$4
  shift 4
  "$GHZ" --insecure "${PROTO_DIRS[@]}" --proto grpc_service.proto --call "$call" -c "$c" \
    --connections "$c" -z "${seconds}s" -O json "$@" "127.0.0.1:$port" |
    python3 -c 'import json,sys
j=json.load(sys.stdin)
p={d["percentage"]: d["latency"] for d in j.get("latencyDistribution") or []}
codes=j.get("statusCodeDistribution") or {}
cut=sum(n for e,n in (j.get("errorDistribution") or {}).items() if "use of closed network connection" in e)
ok=codes.get("OK",0); n=sum(codes.values())
print("%.1f,%.3f,%.3f,%d,%d,%d" % (ok/(j["total"]/1e9), p.get(50,0)/1e6, p.get(99,0)/1e6, ok, n-ok-cut, 0))'
}

# Lines for a results folder: the machine, the JVM, the load before the run.
machine_json() {
  python3 - "$@" <<'PY'
import json, os, platform, subprocess, sys, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.strip().splitlines()
print(json.dumps({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpu": cpu,
                  "cpus": os.cpu_count(), "java": java[0] if java else "", "kernel": platform.release(),
                  "loadavg": open("/proc/loadavg").read().split()[:3], "command": " ".join(sys.argv[1:])}))
PY
}
