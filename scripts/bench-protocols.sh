#!/usr/bin/env bash
# Builds the benchmarks jar and runs the protocol benchmark (JSON REST vs binary REST vs gRPC at
# 1, 8 and 64 clients on iris and mlp-medium, next to the in-process ONNX Runtime floor; about
# 3 minutes on 2 cores), then writes docs/bench/protocols.md and the "## Protocols" section at the
# end of docs/BENCHMARKS.md. Usage: scripts/bench-protocols.sh [--rounds N] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests
exec java -Xmx2g -cp modelkeeper-benchmarks/target/benchmarks.jar \
  dev.modelkeeper.benchmarks.ProtocolBench --docs docs --command "scripts/bench-protocols.sh $*" "$@"
