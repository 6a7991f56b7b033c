package dev.modelkeeper.benchmarks;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * {@code benchmarks.jar diagnose}: the ingredient costs of a lease ({@link LeaseCostBenchmark})
 * next to the real lease and Caffeine, at 1 and 2 threads, printed as a table. Not thread-safe; run
 * once.
 */
final class Diagnose {

  private Diagnose() {}

  static void run(Path logs) throws Exception {
    for (int threads : List.of(1, 2)) {
      // one thread: the per-call cost of each ingredient (Zipf keys); two: also the same-key
      // contention
      String[] keys = threads == 1 ? new String[] {"zipf"} : new String[] {"same", "zipf"};
      Collection<RunResult> results =
          new Runner(
                  new OptionsBuilder()
                      .include(LeaseCostBenchmark.class.getName() + "\\..*")
                      .include(HotPathBenchmark.class.getName() + "\\.(modelKeeperBase|caffeine)$")
                      .param("keys", keys)
                      .threads(threads)
                      .forks(1)
                      .warmupIterations(2)
                      .warmupTime(TimeValue.milliseconds(500))
                      .measurementIterations(4)
                      .measurementTime(TimeValue.milliseconds(500))
                      .jvmArgsAppend(HotPath.JVM_ARGS)
                      .output(logs.resolve("diagnose." + threads + "t.txt").toString())
                      .build())
              .run();
      System.out.printf("%n%d thread(s), million operations per second:%n", threads);
      results.stream()
          .sorted(
              java.util.Comparator.comparing(
                      (RunResult r) ->
                          r.getParams().getParam("keys") == null
                              ? ""
                              : r.getParams().getParam("keys"))
                  .thenComparing(r -> r.getParams().getBenchmark()))
          .forEach(
              r ->
                  System.out.printf(
                      Locale.ROOT,
                      "  %-5s %-60s %8.1f ± %.1f%n",
                      r.getParams().getParam("keys") == null ? "-" : r.getParams().getParam("keys"),
                      r.getParams().getBenchmark().replace("dev.modelkeeper.benchmarks.", ""),
                      r.getPrimaryResult().getScore(),
                      r.getPrimaryResult().getScoreError()));
    }
  }
}
