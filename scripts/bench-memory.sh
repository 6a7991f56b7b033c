#!/usr/bin/env bash
# The memory benchmark (workloads 11 and 6 of the design's BENCHMARKS.md). Tools: wrk for the load
# (binary tensors at each model's largest batch, clients rotating over the models), /proc/<pid>/status
# sampled every 100 ms for RSS, the server's /metrics and /model/registry for its own figures
# (scripts/bench/memory.py drives them), the benchmarks jar's ModelAlone for a model alone in a JVM
# of its own (per-model), matplotlib for the RSS chart.
#
#   scripts/bench-memory.sh SCENARIO [--out DIR] [--baseline-jar PATH | --baseline-commit SHA] [options]
#
# SCENARIO: acceptance (copies of convnet under the cap, ~3 min), python (copies of a Python model
# holding --python-mb of numpy data under the cap, with --python INTERPRETER, ~3 min), churn (the cap of the work tree's
# jar vs the file-size budget of a baseline jar, 2 x 10 min), per-model (~2 min) or cycles (1,000
# load/unload cycles). `scripts/bench-memory.sh SCENARIO --help` lists the options (--seconds N,
# --copies N, --clients N, --cap SIZE, --budget SIZE, --heap SIZE, ...).
# Leaves DIR/<run>-rss.csv, DIR/<run>-summary.json (per-model: DIR/per-model.csv), DIR/memory.md
# and DIR/memory-rss.png; DIR defaults to bench-results/memory-SCENARIO. Exit status 1 when a server
# logged OutOfMemoryError or died.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
if [[ $# -eq 0 || "$1" == -* ]]; then
  die "usage: scripts/bench-memory.sh acceptance|churn|per-model|cycles [--out DIR] [--baseline-jar PATH | --baseline-commit SHA] [options]"
fi
scenario=$1
shift
given="$*"
out=bench-results/memory-$scenario baseline_commit="" args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --baseline-commit) baseline_commit=$2; shift 2 ;;
    -h | --help) exec python3 scripts/bench/memory.py "$scenario" --help ;;
    *) args+=("$1"); shift ;;
  esac
done
need_wrk
./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
if [[ -n "$baseline_commit" ]]; then
  clone=$(mktemp -d "${TMPDIR:-/tmp}/modelkeeper-baseline.XXXXXX")
  trap 'rm -rf "$clone"' EXIT
  git clone -q --no-checkout . "$clone"
  git -C "$clone" checkout -q "$baseline_commit"
  (cd "$clone" && ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests)
  args=(--baseline-jar "$clone/modelkeeper-cli/target/modelkeeper.jar" "${args[@]}")
fi
# the demo repository, written by the benchmarks jar's ModelAlone dependency when missing
java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.memory.ModelAlone --demo \
  "$MK_CACHE/demo-repository" >/dev/null
mkdir -p "$out"
machine_json "scripts/bench-memory.sh $scenario${given:+ $given}" >"$out/machine.json"
status=0
python3 scripts/bench/memory.py "$scenario" --jar modelkeeper-cli/target/modelkeeper.jar \
  --demo "$MK_CACHE/demo-repository" --out "$out" "${args[@]}" || status=$?
python3 scripts/bench/render.py memory "$out" | tee "$out/memory.md"
[[ "$scenario" == per-model ]] || "$(plot_python)" scripts/bench/plot.py memory "$out"
log "results in $out"
exit $status
