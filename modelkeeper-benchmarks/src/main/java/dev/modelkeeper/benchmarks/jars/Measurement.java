package dev.modelkeeper.benchmarks.jars;

import dev.modelkeeper.benchmarks.memory.ClosedLoop;
import java.util.Map;

/**
 * One closed-loop run: a jar, a round, a workload and a client count, and what the clients saw.
 * Immutable and thread-safe.
 *
 * @param side which jar served it
 * @param round the round, counted from 1
 * @param workload what the clients sent
 * @param clients how many closed-loop clients sent it
 * @param requestsPerSecond 2xx answers per second of the run
 * @param p50Millis median latency of the 200 answers, ms; NaN when there were none
 * @param p99Millis 99th percentile latency of the 200 answers, ms; NaN when there were none
 * @param non2xx requests answered outside 2xx or not answered at all
 */
record Measurement(
    Side side,
    int round,
    Workload workload,
    int clients,
    double requestsPerSecond,
    double p50Millis,
    double p99Millis,
    long non2xx) {

  /** The figures of {@code result}, a run of {@code clients} clients sending {@code workload}. */
  static Measurement of(
      Side side, int round, Workload workload, int clients, ClosedLoop.Result result) {
    long ok = 0;
    long other = 0;
    for (Map.Entry<Integer, Long> e : result.byStatus().entrySet()) {
      if (e.getKey() >= 200 && e.getKey() < 300) {
        ok += e.getValue();
      } else {
        other += e.getValue();
      }
    }
    return new Measurement(
        side,
        round,
        workload,
        clients,
        ok / result.seconds(),
        result.percentileMillis(50),
        result.percentileMillis(99),
        other);
  }
}
