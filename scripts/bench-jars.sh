#!/usr/bin/env bash
# Builds the server (cli) and benchmarks jars and compares the server jar with a previous release's
# in one interleaved run (about 7 minutes on 2 cores with the defaults): each jar serves its bundled
# demo models as a child process; iris JSON, mlp-medium and convnet binary at 1, 8 and 64 clients.
# Writes docs/bench/jars.md and prints it. Arguments go to the harness; --before is required:
#   scripts/bench-jars.sh --before /tmp/before.jar [--after JAR] [--rounds N] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -pl modelkeeper-cli,modelkeeper-benchmarks -am package -DskipTests
exec java -cp modelkeeper-benchmarks/target/benchmarks.jar dev.modelkeeper.benchmarks.jars.JarThroughputBench \
  --docs docs --command "scripts/bench-jars.sh${*:+ $*}" "$@"
