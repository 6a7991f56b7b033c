package dev.modelkeeper.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * How long and how hard each workload runs: {@link #FULL} for the published tables, {@link #QUICK}
 * to check the harness in a minute. Immutable and thread-safe.
 */
record Settings(
    String name,
    HotPath.Plan plan,
    List<Integer> hotThreads,
    int stampedeThreads,
    long coldLoadMillis,
    int parallelModels,
    int rounds,
    Churn.Config churn,
    List<Integer> churnThreads) {

  static final Settings FULL =
      new Settings(
          "full",
          new HotPath.Plan(3, 2, TimeValue.milliseconds(500), 8, TimeValue.milliseconds(500)),
          List.of(1, 2),
          1_000,
          200,
          8,
          5,
          new Churn.Config(4, 2, 5, 200, 1_000, Duration.ofSeconds(2), Duration.ofSeconds(10)),
          List.of(2, 8));

  static final Settings QUICK =
      new Settings(
          "quick",
          new HotPath.Plan(1, 1, TimeValue.milliseconds(500), 2, TimeValue.milliseconds(500)),
          List.of(1, 2),
          1_000,
          200,
          8,
          1,
          new Churn.Config(4, 2, 5, 200, 1_000, Duration.ofMillis(500), Duration.ofSeconds(2)),
          List.of(2, 8));

  /** The JMH settings in words. */
  String planText() {
    return plan.forks()
        + " rounds of one fork each, interleaved across configurations, × ("
        + plan.warmups()
        + " warm-up iterations of "
        + plan.warmupTime().convertTo(TimeUnit.MILLISECONDS)
        + " ms + "
        + plan.iterations()
        + " measured iterations of "
        + plan.iterationTime().convertTo(TimeUnit.MILLISECONDS)
        + " ms)";
  }
}
