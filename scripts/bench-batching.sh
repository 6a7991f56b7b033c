#!/usr/bin/env bash
# Builds the benchmarks jar and runs the batching benchmark (a few minutes on 2 cores): the demo's
# convnet at 1, 8 and 64 clients over binary REST, batching off vs on, and per-model isolation.
# Writes docs/bench/batching.md and its section of docs/BENCHMARKS.md. Extra arguments go to the harness (--seconds N, --rounds N).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests
exec java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.BatchingBench \
  --docs docs --command "scripts/bench-batching.sh${*:+ $*}" "$@"
