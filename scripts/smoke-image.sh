#!/usr/bin/env bash
# Smoke test of the ModelKeeper container image: starts it under a 1 GiB memory limit with its
# REST and gRPC ports published on loopback, waits (bounded) until it is ready, then checks
#   - the server took its memory cap from the container's limit,
#   - it runs as the image's user (uid 10001) and writes its cache to the volume,
#   - the image's HEALTHCHECK passes,
#   - REST inference (curl, JSON) and gRPC inference (tritonclient.grpc) classify two Iris
#     flowers as setosa and virginica,
#   - SIGTERM stops it cleanly (exit 0) within its shutdown timeout.
# The container and its anonymous volume are removed on exit, whatever happens.
#
#   scripts/smoke-image.sh [IMAGE]        default: modelkeeper:latest
#
# The gRPC client is the pinned tritonclient of modelkeeper-interop (the same venv under
# ~/.cache/modelkeeper/ that `./mvnw verify` makes; made here when missing: Python 3 with venv
# and PyPI access needed). MODELKEEPER_RUN_OPTS replaces the engine's extra `run` options.
set -euo pipefail
SCRIPT=smoke-image
cd "$(dirname "$0")/.."
source scripts/image-common.sh

find_engine
IMAGE=${1:-$IMAGE_NAME:latest}
READY_TIMEOUT=${SMOKE_READY_TIMEOUT:-120}
STOP_TIMEOUT=40 # above the server's --shutdown-timeout of 30s
NAME=modelkeeper-smoke-$$

image_exists "$IMAGE" || die "no image '$IMAGE': build it with scripts/build-image.sh"

default_run_opts=""
if [[ $ENGINE == podman ]] && command -v runc >/dev/null 2>&1; then
  # runc and explicit limits: what podman needs to start containers on nested hosts and CI
  # machines (crun, or the host's huge nofile limit, fails there); harmless elsewhere.
  default_run_opts="--runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096"
fi
read -r -a RUN_OPTS <<<"${MODELKEEPER_RUN_OPTS-$default_run_opts}"

# The Python client: the interop module's venv, keyed like PythonEnv by its pins' hash.
REQUIREMENTS=modelkeeper-interop/src/test/python/requirements.txt
VENV=$HOME/.cache/modelkeeper/interop-venv-$(sha256sum "$REQUIREMENTS" | cut -c1-12)
PY=$VENV/bin/python
if [[ -f $VENV/.installed && -x $PY ]]; then
  say "gRPC client: reusing $VENV"
else
  command -v python3 >/dev/null 2>&1 ||
    die "python3 is needed for the gRPC client (Debian: apt-get install -y python3 python3-venv)"
  mkdir -p "$(dirname "$VENV")" target/image
  run_logged "gRPC client: making $VENV" 120 target/image/venv.log python3 -m venv --clear "$VENV"
  run_logged "gRPC client: installing $(grep -v '^#' "$REQUIREMENTS" | tr '\n' ' ')" 600 \
    target/image/pip.log "$PY" -m pip install --disable-pip-version-check -q -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV/.installed"
fi

logs() { timeout 30 "$ENGINE" logs "$NAME" 2>&1 || true; }
fail() {
  say "container log:"
  logs | tail -n 40 >&2
  die "$*"
}
body=$(mktemp)
cleanup() {
  rm -f "$body"
  if [[ $ENGINE == podman ]]; then
    timeout 60 podman rm -f -v -t 2 "$NAME" >/dev/null 2>&1 || true
  else
    timeout 60 docker rm -f -v "$NAME" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

say "starting $IMAGE as $NAME (--memory 1g)"
if [[ $ENGINE == podman ]] && [[ ! -S /run/systemd/private ]]; then
  say "(without systemd podman runs no health-check timer and logs 'unable to get systemd" \
    "connection' errors; harmless: the check is run once below)"
fi
START=$SECONDS
timeout 120 "$ENGINE" run -d --name "$NAME" --memory 1g \
  -p 127.0.0.1::8000 -p 127.0.0.1::8001 "${RUN_OPTS[@]}" "$IMAGE" >/dev/null ||
  die "'$ENGINE run' failed"
REST=$(timeout 30 "$ENGINE" port "$NAME" 8000/tcp | head -n 1)
GRPC=$(timeout 30 "$ENGINE" port "$NAME" 8001/tcp | head -n 1)
[[ -n $REST && -n $GRPC ]] || fail "the ports are not published"
say "REST on $REST, gRPC on $GRPC"

deadline=$((SECONDS + READY_TIMEOUT))
until curl -fsS -m 2 -o /dev/null "http://$REST/v2/health/ready" 2>/dev/null; do
  running=$(timeout 30 "$ENGINE" inspect --format '{{.State.Running}}' "$NAME" || echo false)
  [[ $running == true ]] || fail "the container stopped before it was ready"
  ((SECONDS < deadline)) || fail "not ready within ${READY_TIMEOUT}s"
  sleep 1
done
say "ready after $((SECONDS - START))s"

logs | grep -q "of the container's memory limit of 1.0 GiB" ||
  fail "the memory cap was not taken from the container's limit (startup summary above)"
say "ok: memory cap from the container's 1 GiB limit"

uid=$(timeout 30 "$ENGINE" exec "$NAME" id -u) || fail "'$ENGINE exec' failed"
[[ $uid == 10001 ]] || fail "the server runs as uid $uid, not 10001"
timeout 30 "$ENGINE" exec "$NAME" test -d /var/cache/modelkeeper/demo-repository/iris ||
  fail "no demo repository in the cache volume /var/cache/modelkeeper"
say "ok: runs as uid 10001, cache in the volume"

if [[ $ENGINE == podman ]]; then
  timeout 30 podman healthcheck run "$NAME" >/dev/null 2>&1 || fail "the HEALTHCHECK failed"
else
  health_deadline=$((SECONDS + 60))
  until [[ $(docker inspect --format '{{.State.Health.Status}}' "$NAME") == healthy ]]; do
    ((SECONDS < health_deadline)) || fail "not healthy within 60s"
    sleep 1
  done
fi
say "ok: HEALTHCHECK passes"

# Two flowers: setosa (label 0) and virginica (label 2), as in the README.
status=$(curl -sS -m 30 -o "$body" -w '%{http_code}' -X POST \
  "http://$REST/v2/models/iris/infer" -H 'Content-Type: application/json' \
  -d '{"id": "smoke", "inputs": [{"name": "input", "shape": [2, 4], "datatype": "FP32",
       "data": [[5.1, 3.5, 1.4, 0.2], [6.3, 3.3, 6.0, 2.5]]}]}') ||
  fail "REST inference: curl failed"
[[ $status == 200 ]] || fail "REST inference answered $status: $(cat "$body")"
"$PY" - "$body" <<'PYTHON' || fail "REST inference: wrong answer"
import json, sys
answer = json.load(open(sys.argv[1]))
out = {o["name"]: o for o in answer["outputs"]}
problems = []
if answer.get("model_name") != "iris" or answer.get("id") != "smoke":
    problems.append(f"model_name/id: {answer.get('model_name')}/{answer.get('id')}")
if out["label"]["shape"] != [2] or out["label"]["data"] != [0, 2]:
    problems.append(f"label: {out['label']}")
p = out["probabilities"]
if p["shape"] != [2, 3] or p["data"][0] < 0.99 or p["data"][5] < 0.99:
    problems.append(f"probabilities: {p}")
for problem in problems:
    print("  unexpected " + problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PYTHON
say "ok: REST inference (labels 0 and 2, probabilities [2, 3])"

timeout 60 "$PY" - "$GRPC" <<'PYTHON' || fail "gRPC inference failed (message above)"
import sys
import numpy as np
import tritonclient.grpc as grpcclient

client = grpcclient.InferenceServerClient(sys.argv[1])
if not (client.is_server_live() and client.is_server_ready()):
    sys.exit("  the server is not live and ready over gRPC")
rows = np.array([[5.1, 3.5, 1.4, 0.2], [6.3, 3.3, 6.0, 2.5]], dtype=np.float32)
flowers = grpcclient.InferInput("input", list(rows.shape), "FP32")
flowers.set_data_from_numpy(rows)
result = client.infer("iris", [flowers], client_timeout=30)
label, p = result.as_numpy("label"), result.as_numpy("probabilities")
if label.tolist() != [0, 2] or p.shape != (2, 3) or p[0, 0] < 0.99 or p[1, 2] < 0.99:
    sys.exit(f"  unexpected answer: label {label.tolist()}, probabilities {p.tolist()}")
PYTHON
say "ok: gRPC inference (labels 0 and 2, probabilities (2, 3))"

say "stopping (SIGTERM, up to ${STOP_TIMEOUT}s)"
timeout $((STOP_TIMEOUT + 20)) "$ENGINE" stop -t "$STOP_TIMEOUT" "$NAME" >/dev/null ||
  fail "'$ENGINE stop' failed"
code=$(timeout 30 "$ENGINE" inspect --format '{{.State.ExitCode}}' "$NAME")
[[ $code == 0 ]] || fail "the server exited with $code after SIGTERM, not 0"
say "ok: clean stop (exit 0)"
say "PASSED in $((SECONDS - START))s"
