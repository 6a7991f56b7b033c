#!/usr/bin/env bash
# Builds the benchmarks jar and runs the protocol benchmark (JSON REST vs binary REST vs gRPC at
# 1, 8 and 64 clients: one-row requests of iris and mlp-medium, and a 64-row mlp-medium request;
# next to the in-process ONNX Runtime floor; about 4 minutes on 2 cores), then writes
# docs/bench/protocols.md and, in place, the "## Protocols" section of docs/BENCHMARKS.md. Usage: scripts/bench-protocols.sh [--rounds N] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests
exec java -Xmx2g -cp modelkeeper-benchmarks/target/benchmarks.jar \
  dev.modelkeeper.benchmarks.ProtocolBench --docs docs --command "scripts/bench-protocols.sh${*:+ $*}" "$@"
