#!/usr/bin/env bash
# Model swap time of server jars, over loopback (see docs/BENCHMARKS.md, "Swap time"):
#
#   scripts/bench-swap.sh loads [--cycles N] [--python PY] MODELS_DIR NAME=JAR[+FLAG...]...
#     per model of MODELS_DIR (<name>.onnx files), N cycles of
#     POST /v2/repository/models/<name>/load then .../unload on an idle server, each jar in turn,
#     then ONNX Runtime's bare session creation on the same file in Python (its default options);
#     median and p90 per model and jar, in ms, and each jar's median over Python's. PY is an
#     interpreter with onnxruntime; by default a venv under ~/.cache/modelkeeper with the
#     onnxruntime of the project's pom, made when missing. A jar that keeps pre-optimized forms
#     has them built by an unmeasured first load (the script waits for them) before its cycles.
#
#   scripts/bench-swap.sh churn [--rounds R] [--seconds S] [--clients "2 8"] CONVNET NAME=JAR[+FLAG...]...
#     4 copies of the convnet file CONVNET, --max-models 2, closed-loop wrk clients each sending
#     binary single-image requests to a model drawn at random; rounds interleave the jars (the
#     order rotates per round); req/s, p50/p99 ms and non-2xx per round, jar and client count.
#
#   scripts/bench-swap.sh path [--cycles N] MODELS_DIR NAME=JAR[+replica][+optimized]...
#     where one load's time goes, in process (LoadPath, benchmarks module): ONNX Runtime's bare
#     session (its default options) against the jar's OnnxModel.load on the same file, cycles
#     interleaved; +replica adds the load path of 5b33505 step by step, +optimized the load from
#     a pre-optimized form (a jar that has them). Median and p90 per step, in ms.
#
# Every server runs as `java -Xmx1g -jar JAR serve FLAG...` (FLAGs after the jar, joined by +: e.g.
# plain=modelkeeper.jar+--pre-optimize+false) with a cache folder of its own per run (so a jar's
# on-disk caches start empty in each round and are kept within it). Needs curl and wrk. Each
# mode prints Markdown and leaves it, with the raw samples as CSV, in --out DIR (default
# bench-results/swap): <mode>.md and <mode>.csv.
set -Eeuo pipefail
mode=${1:-}
shift || true
cycles=20
rounds=3
seconds=60
clients="2 8"
python=
out=bench-results/swap
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) break ;;
  esac
done
case "$mode" in
  loads | churn | path) ;;
  *) echo "usage: $0 loads|churn|path [options] MODELS_DIR|CONVNET NAME=JAR..." >&2; exit 2 ;;
esac
source=$1
shift
jars=("$@")
[ ${#jars[@]} -ge 1 ] || { echo "name at least one NAME=JAR" >&2; exit 2; }
for entry in "${jars[@]}"; do
  j=${entry#*=}
  [ -f "${j%%+*}" ] || { echo "no jar at ${j%%+*}" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$mode" in
  loads) echo "model,jar,measure,ms" ;;
  churn) echo "round,jar,clients,rps,p50_ms,p99_ms,non2xx,loads" ;;
  path) echo "model,step,ms,jar" ;;
esac > "$out/$mode.csv"
exec > >(tee "$out/$mode.md")
work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "$0: failed at line $LINENO (the server said: $(tail -3 "$work"/*.err 2>/dev/null | tr "\n" " "))" >&2' ERR

# start_server NAME JAR[+FLAG...] REPOSITORY FLAGS...: sets $server and $port
start_server() {
  local name=$1 jar=${2%%+*} repo=$3 extra=()
  [[ $2 == *+* ]] && IFS=+ read -r -a extra <<< "${2#*+}"
  shift 3
  set -- "${extra[@]}" "$@"
  rm -rf "$work/cache-$name"
  # the previous server's output goes first: the new one's redirection is made in the background,
  # and its "Ready." must not be read from the old file
  rm -f "$work/$name.out" "$work/$name.err"
  # port 0: the server takes a free port and prints it, so no other process can take it first
  java -Xmx1g -jar "$jar" serve --port 0 --grpc-port -1 --repository "$repo" \
    --cache-dir "$work/cache-$name" ${1+"$@"} > "$work/$name.out" 2> "$work/$name.err" &
  server=$!
  for ((t = 0; t < 240; t++)); do
    if grep -q '^Ready\.' "$work/$name.out" 2>/dev/null; then
      port=$(sed -n 's|^ModelKeeper is serving http://[^:]*:\([0-9]*\).*|\1|p' "$work/$name.out")
      return 0
    fi
    kill -0 "$server" 2>/dev/null || { cat "$work/$name.err" >&2; exit 1; }
    sleep 0.25
  done
  echo "$name did not get ready" >&2
  exit 1
}

stop_server() {
  kill -TERM "$server"
  wait "$server" 2>/dev/null || true
  server=
}

# post URL: POST with an empty body; fails naming the status and the answer unless it is 200
post() {
  local code
  rm -f "$work/answer"
  code=$(curl -s -o "$work/answer" -w '%{http_code}' -X POST "$1") || true
  if [ "$code" = 000 ]; then # no answer at all (a connection the server had just closed): once more
    sleep 1
    code=$(curl -s -o "$work/answer" -w '%{http_code}' -X POST "$1") || true
  fi
  [ "$code" = 200 ] && return 0
  echo "POST $1 answered ${code:-nothing}: $(head -c 300 "$work/answer" 2>/dev/null)" >&2
  if [ -n "$server" ] && ! kill -0 "$server" 2>/dev/null; then
    wait "$server" 2>/dev/null
    echo "the server had exited (status $?); its last lines: $(tail -3 "$work"/*.out | tr '\n' ' ')" >&2
  fi
  return 1
}

# load_seconds PORT: the server's modelkeeper_model_load_seconds_sum (time in the model manager)
load_seconds() {
  curl -sf "http://127.0.0.1:$1/metrics" | awk '/^modelkeeper_model_load_seconds_sum/ {s += $2} END {printf "%.6f\n", s}'
}

# quantiles FILE: "median p90" of the numbers in FILE (nearest rank)
quantiles() {
  sort -g "$1" | awk '{v[NR]=$1} END {m=int((NR+1)/2); p=int(0.9*NR+0.999); printf "%.1f %.1f\n", v[m], v[p]}'
}

# forms_ready NAME N: waits (at most 120 s) until the server NAME keeps N pre-optimized forms, when
# it keeps forms at all (a model file below 1 MiB gets none)
forms_ready() {
  grep -q 'pre-optimized model forms kept in' "$work/$1.out" || return 0
  local want=$2 have=0
  for ((t = 0; t < 480; t++)); do
    have=$( (find "$work/cache-$1/optimized" -mindepth 2 -maxdepth 2 -name entry.json 2>/dev/null || true) | wc -l)
    [ "$have" -ge "$want" ] && return 0
    sleep 0.25
  done
  echo "$1 kept $have of $want pre-optimized forms after 120 s" >&2
  exit 1
}

# the onnxruntime of the pom, in a venv of its own, for the bare session
ort_python() {
  local version venv
  version=$(sed -n 's:.*<onnxruntime.version>\(.*\)</onnxruntime.version>.*:\1:p' "$(dirname "$0")/../pom.xml")
  venv=${MODELKEEPER_CACHE:-$HOME/.cache/modelkeeper}/ort-venv-$version
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import onnxruntime' 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "onnxruntime==$version" >&2
  fi
  echo "$venv/bin/python"
}

echo "load average before: $(cat /proc/loadavg)"
if [ "$mode" = path ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  classes=$root/modelkeeper-benchmarks/target/classes
  [ -f "$classes/dev/modelkeeper/benchmarks/swap/LoadPath.class" ] ||
    (cd "$root" && ./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests) >&2
  models=()
  for f in "$source"/*.onnx; do
    models+=("$(basename "$f" .onnx)=$(readlink -f "$f")")
  done
  for entry in "${jars[@]}"; do
    name=${entry%%=*}
    spec=${entry#*=}
    jar=${spec%%+*}
    flags=()
    [[ $spec == *+replica* ]] && flags+=(--replica)
    [[ $spec == *+optimized* ]] && flags+=(--optimized-cache "$work/optimized-$name")
    echo
    echo "### $name ($jar)"
    echo
    java -Xmx1g -cp "$jar:$classes" dev.modelkeeper.benchmarks.swap.LoadPath --cycles "$cycles" \
      ${flags[@]+"${flags[@]}"} "${models[@]}" 2> "$work/$name.err" > "$work/$name.path" ||
      { cat "$work/$name.err" >&2; exit 1; }
    grep '^|' "$work/$name.path"
    grep -v '^|' "$work/$name.path" | grep -v '^model,step,ms$' | grep . | sed "s/\$/,$name/" >> "$out/path.csv"
  done
elif [ "$mode" = loads ]; then
  [ -n "$python" ] || python=$(ort_python)
  repo="$work/repository"
  names=()
  for f in "$source"/*.onnx; do
    n=$(basename "$f" .onnx)
    names+=("$n")
    mkdir -p "$repo/$n/1"
    ln "$(readlink -f "$f")" "$repo/$n/1/model.onnx" 2>/dev/null || cp "$f" "$repo/$n/1/model.onnx"
  done
  cat > "$work/bare.py" <<'PY'
import sys, time
import onnxruntime as ort
path, cycles = sys.argv[1], int(sys.argv[2])
ort.InferenceSession(path, providers=["CPUExecutionProvider"])  # unmeasured: first reads
for _ in range(cycles):
    t = time.perf_counter()
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    print((time.perf_counter() - t) * 1000)
    del s
    time.sleep(0.3)
PY
  printf '| model | %s | python bare session median / p90 ms |\n' "$(printf '%s: HTTP median / p90 ms (manager median), x python | ' "${jars[@]%%=*}" | sed 's/ | $//')"
  printf '|---|%s---:|\n' "$(printf -- '---:|%.0s' "${jars[@]}")"
  for n in "${names[@]}"; do
    cells=()
    meds=()
    for entry in "${jars[@]}"; do
      name=${entry%%=*}
      jar=${entry#*=}
      start_server "$name" "$jar" "$repo"
      url="http://127.0.0.1:$port/v2/repository/models/$n"
      post "$url/load" # unmeasured: first use of the code and the file
      post "$url/unload"
      forms_ready "$name" "$(($(stat -L -c %s "$source/$n.onnx") >= 1048576 ? 1 : 0))"
      : > "$work/t"
      : > "$work/m"
      for ((c = 0; c < cycles; c++)); do
        sleep 0.5
        before=$(load_seconds "$port")
        curl -sf -o /dev/null -w '%{time_total}\n' -X POST "$url/load" | awk '{print $1 * 1000}' >> "$work/t"
        after=$(load_seconds "$port")
        awk -v a="$after" -v b="$before" 'BEGIN {print (a - b) * 1000}' >> "$work/m"
        post "$url/unload"
      done
      stop_server
      awk -v m="$n" -v j="$name" '{print m "," j ",http," $1}' "$work/t" >> "$out/loads.csv"
      awk -v m="$n" -v j="$name" '{print m "," j ",manager," $1}' "$work/m" >> "$out/loads.csv"
      read -r med p90 < <(quantiles "$work/t")
      read -r mmed mp90 < <(quantiles "$work/m")
      cells+=("$med / $p90 ($mmed)")
      meds+=("$med")
    done
    "$python" "$work/bare.py" "$(readlink -f "$source/$n.onnx")" "$cycles" 2>/dev/null > "$work/py"
    awk -v m="$n" '{print m ",python,bare," $1}' "$work/py" >> "$out/loads.csv"
    read -r pmed pp90 < <(quantiles "$work/py")
    row="| $n |"
    for ((k = 0; k < ${#cells[@]}; k++)); do
      row="$row ${cells[$k]}, $(awk -v a="${meds[$k]}" -v b="$pmed" 'BEGIN {printf "%.2fx", a / b}') |"
    done
    echo "$row $pmed / $pp90 |"
  done
else
  repo="$work/repository"
  for c in a b c d; do
    mkdir -p "$repo/convnet-$c/1"
    cp "$source" "$repo/convnet-$c/1/model.onnx"
    # four models, not four names for one: each copy ends with a doc_string of its own (ModelProto
    # field 6; the last one parsed wins), so each has its own digest and pre-optimized form
    printf '\x32\x01%s' "$c" >> "$repo/convnet-$c/1/model.onnx"
  done
  cat > "$work/churn.lua" <<'LUA'
local names = {"convnet-a", "convnet-b", "convnet-c", "convnet-d"}
local header = '{"inputs":[{"name":"image","datatype":"FP32","shape":[1,3,64,64],' ..
  '"parameters":{"binary_data_size":49152}}],"outputs":[{"name":"label"}]}'
local body = header .. string.rep("\0", 49152)
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
function init(args)
  math.randomseed(seed * 7919)
end
function request()
  local path = "/v2/models/" .. names[math.random(4)] .. "/infer"
  return wrk.format("POST", path, {
    ["Content-Type"] = "application/octet-stream",
    ["Inference-Header-Content-Length"] = tostring(#header)}, body)
end
LUA
  echo "| round | jar | clients | req/s | p50 ms | p99 ms | non-2xx | loads |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
  n=${#jars[@]}
  for ((round = 1; round <= rounds; round++)); do
    for ((k = 0; k < n; k++)); do
      entry=${jars[$(((k + round - 1) % n))]}
      name=${entry%%=*}
      jar=${entry#*=}
      for c in $clients; do
        start_server "$name" "$jar" "$repo" --max-models 2
        url="http://127.0.0.1:$port"
        threads=$((c < 2 ? 1 : 2))
        # warm-up: every model loaded once, the code compiled
        wrk -t"$threads" -c"$c" -d5s -s "$work/churn.lua" "$url" > /dev/null
        forms_ready "$name" 4 # the steady state of a jar that keeps forms: each model's is kept
        before=$(curl -sf "$url/metrics" | awk '/^modelkeeper_model_loads_total/ {s += $2} END {print s + 0}')
        said=$(wrk -t"$threads" -c"$c" -d"${seconds}s" --latency -s "$work/churn.lua" "$url")
        after=$(curl -sf "$url/metrics" | awk '/^modelkeeper_model_loads_total/ {s += $2} END {print s + 0}')
        stop_server
        rps=$(awk '/^Requests\/sec/ {print $2}' <<< "$said")
        ms() { awk -v q="$1" '$1 == q {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<< "$said"; }
        non2xx=$(awk '/Non-2xx/ {print $NF}' <<< "$said")
        echo "| $round | $name | $c | $rps | $(ms 50%) | $(ms 99%) | ${non2xx:-0} | $((after - before)) |"
        echo "$round,$name,$c,$rps,$(ms 50%),$(ms 99%),${non2xx:-0},$((after - before))" >> "$out/churn.csv"
      done
    done
  done
fi
echo "load average after: $(cat /proc/loadavg)"
