#!/usr/bin/env bash
# Builds the server (cli) jar and the benchmarks jar, then runs the memory benchmark (workloads 11
# and 6 of the design's BENCHMARKS.md): the server jars run as child processes on loopback, their
# RSS sampled from /proc. Writes docs/bench/memory.md, docs/bench/memory-rss.png and the Memory
# section of docs/BENCHMARKS.md (--docs DIR writes elsewhere).
#
#   scripts/bench-memory.sh SCENARIO [--baseline-jar PATH | --baseline-commit SHA] [harness options]
#
# SCENARIO is acceptance (~3 min), churn (2 x 10 min), per-model (~2 min) or cycles (1,000 cycles);
# `scripts/bench-memory.sh SCENARIO --help` lists the harness's options (--seconds N, --cycles N,
# --cap SIZE, --budget SIZE, ...). churn compares the work tree's jar with a baseline jar: give it
# with --baseline-jar PATH, or --baseline-commit SHA to build that commit's jar in a temporary clone.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -eq 0 || "$1" == -* ]]; then
  echo "usage: scripts/bench-memory.sh acceptance|churn|per-model|cycles [--baseline-jar PATH |" \
    "--baseline-commit SHA] [harness options]" >&2
  exit 2
fi
scenario=$1
shift
given="$*"

baseline_jar=""
baseline_commit=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --baseline-jar) baseline_jar=$2; shift 2 ;;
    --baseline-jar=*) baseline_jar=${1#*=}; shift ;;
    --baseline-commit) baseline_commit=$2; shift 2 ;;
    --baseline-commit=*) baseline_commit=${1#*=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests

if [[ -n "$baseline_commit" && -z "$baseline_jar" ]]; then
  clone=$(mktemp -d "${TMPDIR:-/tmp}/modelkeeper-baseline.XXXXXX")
  trap 'rm -rf "$clone"' EXIT
  git clone -q --no-checkout . "$clone"
  git -C "$clone" checkout -q "$baseline_commit"
  (cd "$clone" && ./mvnw -B -q -pl modelkeeper-cli -am package -DskipTests)
  baseline_jar="$clone/modelkeeper-cli/target/modelkeeper.jar"
fi
if [[ "$scenario" == churn && -z "$baseline_jar" ]]; then
  echo "churn needs the baseline: --baseline-jar PATH or --baseline-commit SHA" >&2
  exit 2
fi
if [[ "$scenario" == churn ]]; then
  args=(--baseline-jar "$baseline_jar" "${args[@]}")
elif [[ -n "$baseline_jar" ]]; then
  echo "note: only churn runs a baseline; ignoring $baseline_jar" >&2
fi

java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.memory.MemoryBench \
  "$scenario" --jar modelkeeper-cli/target/modelkeeper.jar \
  --command "scripts/bench-memory.sh $scenario${given:+ $given}" \
  "${args[@]}"
