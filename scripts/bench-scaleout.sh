#!/usr/bin/env bash
# The scale-out benchmark (a few minutes): three replicas of the packaged jar behind HAProxy
# (deploy/haproxy/haproxy.cfg; installed with apt-get when missing), 12 models, budget 4 per
# replica; model-affine vs round-robin routing. Writes docs/bench/scale-out.md and the same section
# at the end of docs/BENCHMARKS.md. Usage: scripts/bench-scaleout.sh [--clients N] [--requests N] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -pl modelkeeper-scaleout -am package -DskipTests
exec java -cp "modelkeeper-scaleout/target/classes:modelkeeper-cli/target/modelkeeper.jar" \
  dev.modelkeeper.scaleout.ScaleOutBench --docs docs --command "scripts/bench-scaleout.sh $*" "$@"
