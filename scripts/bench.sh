#!/usr/bin/env bash
# The lifecycle manager's own benchmarks, in process (workloads 1-4 of the design's BENCHMARKS.md).
# Tools: JMH for the hot path (HotPathBenchmark: lease vs ConcurrentHashMap, Caffeine and the
# one-lock LRU; interleaved rounds, one fork per configuration per round, its JSON results), and
# the benchmarks jar's BenchMain for the stampede, parallel loads and churn on sleep-based fake
# models (CSV; churn percentiles from HdrHistogram). About 12 minutes on 2 cores with `all`.
#
#   scripts/bench.sh [all|quick|hotpath|stampede|parallel|churn|diagnose] [--out DIR]
#
# Leaves DIR/hotpath/*.json (JMH), DIR/{stampede,parallel,churn}.csv, DIR/machine.json, DIR/bench.md
# (rendered by scripts/bench/render.py) and DIR/hotpath.png and DIR/churn.png (matplotlib); DIR
# defaults to bench-results/bench. `quick` runs everything briefly; `diagnose` prints JMH's table
# of the lease's ingredient costs (LeaseCostBenchmark) at 1 and 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/lib.sh
part=all
if [[ $# -gt 0 && $1 != --* ]]; then
  part=$1
  shift
fi
out=bench-results/bench
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    *) die "unknown argument '$1'; usage: $0 [all|quick|hotpath|stampede|parallel|churn|diagnose] [--out DIR]" ;;
  esac
done
case "$part" in
  all | quick | hotpath | stampede | parallel | churn | diagnose) ;;
  *) die "unknown part '$part'; one of all, quick, hotpath, stampede, parallel, churn, diagnose" ;;
esac
./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests
jar=modelkeeper-benchmarks/target/benchmarks.jar
mkdir -p "$out"
machine_json "scripts/bench.sh $part" >"$out/machine.json"
# forked JVMs pre-touch a fixed heap: on this kind of virtual machine the first touch of a page is
# slow enough to distort allocation-heavy code
jvm="-Xms256m -Xmx256m -XX:+AlwaysPreTouch"

if [ "$part" = diagnose ]; then
  for t in 1 2; do
    keys=$([ "$t" = 1 ] && echo zipf || echo same,zipf)
    java -cp "$jar" org.openjdk.jmh.Main 'LeaseCostBenchmark\..*' 'HotPathBenchmark\.(modelKeeperBase|caffeine)$' \
      -p keys="$keys" -t "$t" -f 1 -wi 2 -w 500ms -i 4 -r 500ms -jvmArgsAppend "$jvm" \
      -rf json -rff "$out/diagnose-${t}t.json"
  done
  exit
fi

case "$part" in
  all) rounds=3 warmups=2 iterations=8 parts=(stampede parallel churn) quick=() ;;
  quick) rounds=1 warmups=1 iterations=1 parts=(stampede parallel churn) quick=(--quick) ;;
  hotpath) rounds=3 warmups=2 iterations=8 parts=() quick=() ;;
  stampede | parallel | churn) rounds=0 warmups=0 iterations=0 parts=("$part") quick=() ;;
  *) die "unknown part '$part'" ;;
esac
if [ ${#parts[@]} -gt 0 ]; then
  java -jar "$jar" "${parts[@]}" "${quick[@]}" --out "$out"
fi
if [ "$rounds" -gt 0 ]; then
  # every round runs one fork of every configuration, the order rotated, so a burst of other
  # load on this shared machine falls on every implementation alike
  impls=(modelKeeper modelKeeperBase concurrentHashMap caffeine oneLockLru)
  mkdir -p "$out/hotpath"
  for ((r = 0; r < rounds; r++)); do
    for t in $( ((r % 2)) && echo 2 1 || echo 1 2); do
      for ((k = 0; k < ${#impls[@]}; k++)); do
        impl=${impls[$(((k + r) % ${#impls[@]}))]}
        log "hot path round $((r + 1))/$rounds: $impl, $t thread(s)"
        java -cp "$jar" org.openjdk.jmh.Main "HotPathBenchmark\\.$impl\$" -t "$t" -f 1 -wi "$warmups" -w 500ms \
          -i "$iterations" -r 500ms -jvmArgsAppend "$jvm" -rf json \
          -rff "$out/hotpath/r$((r + 1))-$impl-${t}t.json" >"$out/hotpath/r$((r + 1))-$impl-${t}t.log"
      done
    done
  done
fi
python3 scripts/bench/render.py bench "$out" | tee "$out/bench.md"
"$(plot_python)" scripts/bench/plot.py bench "$out"
log "results in $out"
