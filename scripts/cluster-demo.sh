#!/usr/bin/env bash
# A three-replica ModelKeeper cluster on this machine: HAProxy (deploy/haproxy/haproxy.cfg) on
# 127.0.0.1:8000 routing by model to replicas on 127.0.0.1:8101, 8102 and 8103, which serve the
# bundled demo repository and share one artifact cache (gRPC on 8201-8203, Triton's metrics on
# 8301-8303). Ctrl+C stops all of them.
#
# Usage: scripts/cluster-demo.sh [more `modelkeeper serve` flags, e.g. --max-models 2]
# Needs the packaged jar (./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests) and haproxy
# (Debian/Ubuntu: apt-get install -y haproxy). Logs go to target/cluster-demo/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar=$root/modelkeeper-cli/target/modelkeeper.jar
config=$root/deploy/haproxy/haproxy.cfg
cache=${MODELKEEPER_CACHE_DIR:-$HOME/.cache/modelkeeper}
logs=$root/target/cluster-demo
ports=(8101 8102 8103)

if [[ ! -f $jar ]]; then
  echo "missing $jar: build it with ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests" >&2
  exit 1
fi
haproxy=$(command -v haproxy || ls /usr/sbin/haproxy 2>/dev/null || true)
if [[ -z $haproxy ]]; then
  echo "haproxy is not installed (Debian/Ubuntu: apt-get install -y haproxy)" >&2
  exit 1
fi
for port in 8000 8404 "${ports[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "127.0.0.1:$port is already in use; stop whatever listens there first" >&2
    exit 1
  fi
done
mkdir -p "$logs"

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo
  echo "Stopping HAProxy and the replicas (each finishes its requests, then unloads its models)..."
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 400); do # at most 40 s, then SIGKILL
    alive=0
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive=1
    done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  echo "Stopped."
}
trap 'stop_all; exit 0' INT TERM
trap stop_all EXIT

"$haproxy" -c -q -f "$config"
for i in 1 2 3; do
  java -jar "$jar" serve --host 127.0.0.1 --port "${ports[i-1]}" --grpc-port "$((ports[i-1] + 100))" \
    --metrics-port "$((ports[i-1] + 200))" --cache-dir "$cache" "$@" \
    >"$logs/r$i.log" 2>&1 &
  pids+=($!)
done
MK_BIND=127.0.0.1:8000 MK_STATS=127.0.0.1:8404 \
  MK_REPLICA1=127.0.0.1:${ports[0]} MK_REPLICA2=127.0.0.1:${ports[1]} MK_REPLICA3=127.0.0.1:${ports[2]} \
  "$haproxy" -db -f "$config" >"$logs/haproxy.log" 2>&1 &
pids+=($!)

for i in 1 2 3; do
  port=${ports[i-1]}
  for attempt in $(seq 1 600); do # at most 60 s each
    if curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null 2>&1; then
      break
    fi
    if ! kill -0 "${pids[i-1]}" 2>/dev/null || [[ $attempt == 600 ]]; then
      echo "replica r$i (port $port) did not become ready; see $logs/r$i.log" >&2
      exit 1
    fi
    sleep 0.1
  done
done

cat <<EOF
ModelKeeper cluster ready: http://127.0.0.1:8000 (HAProxy) -> r1 :${ports[0]}, r2 :${ports[1]}, r3 :${ports[2]}
  infer:     curl -s -X POST 127.0.0.1:8000/v2/models/iris/infer \\
               -d '{"inputs": [{"name": "input", "shape": [1, 4], "datatype": "FP32", "data": [5.1, 3.5, 1.4, 0.2]}]}'
  add:       curl -s -X POST 127.0.0.1:8000/model/add -H 'X-Model-Id: mlp-small'
  registry:  for p in ${ports[*]}; do curl -s 127.0.0.1:\$p/model/registry; echo; done
  stats:     http://127.0.0.1:8404/stats
  logs:      $logs
Press Ctrl+C to stop everything.
EOF
wait -n "${pids[@]}" || true
echo "a process of the cluster exited on its own; see $logs" >&2
