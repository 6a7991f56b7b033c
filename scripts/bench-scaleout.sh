#!/usr/bin/env bash
# Scale-out (workload 10 of the design's BENCHMARKS.md): three replicas of the work tree's jar
# behind HAProxy (deploy/haproxy/haproxy.cfg, and two variants of it: hash-balance-factor 0, round
# robin), 12 models (copies of the demo's iris) in one local repository, a budget of 4 models per
# replica (the 12 models exactly fill three budgets), then 8. Tools: HAProxy (Debian, installed when
# missing) routes, wrk loads it (a Lua script asking for a model drawn uniformly per request); loads
# and resident models come from each replica's /metrics and /model/registry. Every replica is
# cleared before each measurement; the routings are interleaved over the rounds.
#
#   scripts/bench-scaleout.sh [--rounds N] [--seconds S] [--clients N] [--out DIR]
#
# Leaves DIR/scaleout.csv, DIR/machine.json and DIR/scaleout.md; DIR defaults to
# bench-results/scaleout.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
rounds=2 seconds=5 clients=4 out=bench-results/scaleout
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] [--clients N] [--out DIR]" ;;
  esac
done
need_wrk
need_debian haproxy haproxy
./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.memory.ModelAlone --demo \
  "$MK_CACHE/demo-repository" >/dev/null
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
machine_json "scripts/bench-scaleout.sh --rounds $rounds --seconds $seconds --clients $clients" >"$out/machine.json"
models=()
for i in $(seq -w 1 12); do
  mkdir -p "$work/repository/m$i"
  cp -al "$MK_CACHE/demo-repository/iris/1" "$work/repository/m$i/1"
  models+=("\"m$i\"")
done
cat >"$work/models.lua" <<LUA
local models = {$(IFS=,; echo "${models[*]}")}
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[5.1,3.5,1.4,0.2]}]}'
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args)
  math.randomseed(7919 * id)
end
function request()
  return wrk.format(nil, "/v2/models/" .. models[math.random(#models)] .. "/infer")
end
$(cat scripts/bench/done.lua)
LUA
declare -A routing_of=(
  [model-affine]=""
  [model-affine-unbounded]="s/hash-balance-factor 150/hash-balance-factor 0/"
  [round-robin]="s/balance hash var(txn.model)/balance roundrobin/"
)
for name in "${!routing_of[@]}"; do
  sed -e "${routing_of[$name]}" deploy/haproxy/haproxy.cfg >"$work/$name.cfg"
  [ "$name" = model-affine ] || ! cmp -s deploy/haproxy/haproxy.cfg "$work/$name.cfg" ||
    die "deploy/haproxy/haproxy.cfg no longer holds what the $name variant replaces"
done

# state FIELD: the fleet's model loads so far, or its resident models (id@replica, one a line)
state() {
  for r in 1 2 3; do
    port=PORT_r$r
    if [ "$1" = loads ]; then
      curl -sf "http://127.0.0.1:${!port}/metrics" | awk '/^modelkeeper_model_loads_total/ {s += $NF} END {print s + 0}'
    else
      curl -sf "http://127.0.0.1:${!port}/model/registry" |
        python3 -c "import json,sys; [print(m['model_id'].split('/')[0] + '@r$r') for m in json.load(sys.stdin)['models']]"
    fi
  done
}

echo "round,budget,routing,rps,p50_ms,p99_ms,requests,non2xx,errors,loads,resident,distinct,on_several" >"$out/scaleout.csv"
for budget in 4 8; do
  for r in 1 2 3; do
    start_jar "r$r" modelkeeper-cli/target/modelkeeper.jar "$work/logs-$budget" --repository "$work/repository" \
      --max-models "$budget"
  done
  for ((round = 0; round <= rounds; round++)); do # round 0 warms the replicas up, unreported
    for routing in model-affine model-affine-unbounded round-robin; do
      bind=127.0.0.1:$(free_port)
      MK_BIND=$bind MK_STATS=127.0.0.1:$(free_port) MK_REPLICA1=127.0.0.1:$PORT_r1 MK_REPLICA2=127.0.0.1:$PORT_r2 \
        MK_REPLICA3=127.0.0.1:$PORT_r3 haproxy -db -f "$work/$routing.cfg" >"$work/haproxy.log" 2>&1 &
      proxy=$!
      for ((t = 0; t < 50; t++)); do curl -sf "http://$bind/v2/health/ready" >/dev/null && break; sleep 0.2; done
      for r in 1 2 3; do port=PORT_r$r; curl -sf -X POST "http://127.0.0.1:${!port}/model/clear" >/dev/null; done
      loads=$(state loads | awk '{s += $1} END {print s}')
      row=$(run_wrk "http://$bind" "$work/models.lua" "$clients" "$seconds")
      loads=$(($(state loads | awk '{s += $1} END {print s}') - loads))
      resident=$(state registry)
      counts=$(awk -F@ 'NF {n++; seen[$1]++} END {d = 0; s = 0; for (m in seen) {d++; if (seen[m] > 1) s++}; print n + 0 "," d "," s}' <<<"$resident")
      kill "$proxy"; wait "$proxy" 2>/dev/null || true
      [ "$round" = 0 ] && continue
      echo "$round,$budget,$routing,$row,$loads,$counts" | tee -a "$out/scaleout.csv" >&2
    done
  done
  for r in 1 2 3; do pid=PID_r$r; stop_jar "${!pid}"; done
done
python3 scripts/bench/render.py scaleout "$out" | tee "$out/scaleout.md"
log "results in $out"
