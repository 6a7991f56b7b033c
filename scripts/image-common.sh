# shellcheck shell=bash
# Shared by build-image.sh and smoke-image.sh (sourced, not run): the container engine, the
# image names, logging and bounded waits.

# shellcheck disable=SC2034 # used by the scripts that source this file
IMAGE_NAME=${MODELKEEPER_IMAGE_NAME:-modelkeeper}
# shellcheck disable=SC2034
BASE_IMAGE=${MODELKEEPER_BASE_IMAGE:-localhost/modelkeeper-base:bookworm-jre17}

say() { printf '[%s] %s\n' "$SCRIPT" "$*" >&2; }
die() {
  printf '[%s] FAILED: %s\n' "$SCRIPT" "$*" >&2
  exit 1
}

# Picks podman, else a docker whose daemon answers; exits loudly when there is neither.
# Sets ENGINE.
find_engine() {
  if command -v podman >/dev/null 2>&1; then
    ENGINE=podman
  elif command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; then
    ENGINE=docker
  else
    {
      echo
      echo "[$SCRIPT] ERROR: no container engine: neither podman nor a running docker daemon."
      if command -v docker >/dev/null 2>&1; then
        echo "  ('docker' is installed but 'docker info' gets no answer from a daemon.)"
      fi
      echo "  Install podman (Debian, Ubuntu; as root):"
      echo "    apt-get update && apt-get install -y podman runc mmdebstrap"
      echo "  or start a docker daemon, then run this again."
      echo
    } >&2
    exit 2
  fi
}

image_exists() {
  if [[ $ENGINE == podman ]]; then
    podman image exists "$1"
  else
    docker image inspect "$1" >/dev/null 2>&1
  fi
}

# run_logged LABEL TIMEOUT LOG COMMAND...: runs COMMAND bounded by TIMEOUT (seconds), its output
# in LOG; every 15 s prints the time taken and LOG's last line. On failure shows LOG's end.
run_logged() {
  local label=$1 limit=$2 log=$3
  shift 3
  local start=$SECONDS pid rc=0
  say "$label (log: $log; at most ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local slept=0
    while ((slept < 15)) && kill -0 "$pid" 2>/dev/null; do
      sleep 1
      slept=$((slept + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "  ... $((SECONDS - start))s: $(tail -n 1 "$log" | cut -c1-100)"
    fi
  done
  wait "$pid" || rc=$?
  if ((rc != 0)); then
    tail -n 40 "$log" >&2
    if ((rc == 124 || rc == 137)); then
      die "$label: timed out after ${limit}s (log: $log)"
    fi
    die "$label: exit $rc (log: $log)"
  fi
  say "  done in $((SECONDS - start))s"
}
