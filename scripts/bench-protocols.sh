#!/usr/bin/env bash
# Builds the benchmarks jar and runs the protocol benchmark (JSON REST vs binary REST vs gRPC at
# 1, 8 and 64 clients: one-row requests of iris and mlp-medium, and a 64-row mlp-medium request;
# next to the in-process ONNX Runtime floor, and the 8- and 64-client mlp-medium cells again with
# h2load as the one load generator of every protocol; about 6 minutes on 2 cores), then writes
# docs/bench/protocols.md and, in place, the "## Protocols" section of docs/BENCHMARKS.md. Usage: scripts/bench-protocols.sh [--rounds N] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."
# h2load (nghttp2) drives the cross-check cells that use one load generator for every protocol
if ! command -v h2load >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y nghttp2-client || { apt-get update && apt-get install -y nghttp2-client; }
  else
    echo "h2load is not installed (Debian/Ubuntu: apt-get install -y nghttp2-client)" >&2
    exit 1
  fi
fi
./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests
exec java -Xmx2g -cp modelkeeper-benchmarks/target/benchmarks.jar \
  dev.modelkeeper.benchmarks.ProtocolBench --docs docs --command "scripts/bench-protocols.sh${*:+ $*}" "$@"
