package dev.modelkeeper.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link HotPathBenchmark} through the JMH runner, once per thread count, and returns its
 * figures. Not thread-safe (JMH runs one benchmark at a time anyway).
 */
final class HotPath {

  /** The implementations, as JMH method names, in table order. */
  static final List<String> IMPLS =
      List.of("modelKeeper", "modelKeeperBase", "concurrentHashMap", "caffeine", "oneLockLru");

  /**
   * The forked JVMs' flags. Pre-touching the heap matters on this kind of virtual machine: there
   * the first touch of a page is so slow that allocation-heavy code would measure page faults (and
   * pre-touching costs about 3 s per fork for 256 MB, 12 s for 1 GB).
   */
  static final String[] JVM_ARGS = {"-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"};

  /**
   * One figure: the median throughput of all measured iterations in operations per microsecond (=
   * millions per second), and a 99% confidence interval of that median.
   */
  record Figure(
      String impl, String keys, int threads, double score, double low, double high, int samples) {}

  /** The confidence of the interval around each median. */
  static final double CONFIDENCE = 0.99;

  /** How long JMH measures each configuration: {@code forks} rounds of one fork each. */
  record Plan(
      int forks, int warmups, TimeValue warmupTime, int iterations, TimeValue iterationTime) {

    /** A rough upper bound of the wall time of one configuration, JVM start included. */
    double secondsPerConfig() {
      return forks
          * (3.5
              + warmups * warmupTime.convertTo(java.util.concurrent.TimeUnit.MILLISECONDS) / 1e3
              + iterations
                  * iterationTime.convertTo(java.util.concurrent.TimeUnit.MILLISECONDS)
                  / 1e3);
    }
  }

  private HotPath() {}

  static String displayName(String impl) {
    switch (impl) {
      case "modelKeeper":
        return "ModelKeeper lease (WithFixedSizeCache)";
      case "modelKeeperBase":
        return "ModelKeeper lease (BaseModelManager)";
      case "concurrentHashMap":
        return "ConcurrentHashMap.get";
      case "caffeine":
        return "Caffeine getIfPresent";
      case "oneLockLru":
        return "One-lock LRU get";
      default:
        return impl;
    }
  }

  /**
   * Runs every implementation and key shape at each of {@code threadCounts}. The forks are
   * interleaved: each round runs one fork of every configuration, in a rotated order, so that a
   * burst of background load on this shared machine hits every implementation alike; the figure of
   * a configuration is the median of all its measured iterations with a 99% interval (see {@link
   * Stats}). A round that would end past {@code deadline} is not started (the first always runs),
   * which keeps the whole command within its time bound on a busy machine. JMH's log goes to files
   * next to {@code log}.
   */
  static List<Figure> run(
      Plan plan, List<Integer> threadCounts, List<String> impls, Path log, Instant deadline)
      throws RunnerException {
    Map<String, List<Double>> stats = new LinkedHashMap<>();
    int configs = 2 * impls.size() * threadCounts.size();
    System.out.printf(
        "hot path: %d configurations x %d rounds, about %.0f s (JMH log: %s.*)%n",
        configs, plan.forks(), configs * plan.secondsPerConfig(), log);
    Duration lastRound = Duration.ZERO;
    for (int round = 0; round < plan.forks(); round++) {
      Instant roundStart = Instant.now();
      if (round > 0 && roundStart.plus(lastRound).isAfter(deadline)) {
        System.out.printf(
            "hot path: stopping after %d of %d rounds, another would end past the time bound (%s)%n",
            round, plan.forks(), deadline);
        break;
      }
      List<String> order = new ArrayList<>(impls);
      Collections.rotate(order, -round);
      List<Integer> threadOrder = new ArrayList<>(threadCounts);
      Collections.rotate(threadOrder, -round);
      for (int threads : threadOrder) {
        for (String impl : order) {
          ChainedOptionsBuilder options =
              new OptionsBuilder()
                  .include(HotPathBenchmark.class.getName() + "\\." + impl + "$")
                  .threads(threads)
                  .forks(1)
                  .warmupIterations(plan.warmups())
                  .warmupTime(plan.warmupTime())
                  .measurementIterations(plan.iterations())
                  .measurementTime(plan.iterationTime())
                  .jvmArgsAppend(JVM_ARGS)
                  .shouldFailOnError(true)
                  .output(log + ".round" + (round + 1) + "." + impl + "." + threads + "t.txt");
          for (RunResult r : new Runner(options.build()).run()) {
            String key = impl + "/" + r.getParams().getParam("keys") + "/" + threads;
            List<Double> s = stats.computeIfAbsent(key, k -> new ArrayList<>());
            for (BenchmarkResult b : r.getBenchmarkResults()) {
              for (IterationResult i : b.getIterationResults()) {
                s.add(i.getPrimaryResult().getScore());
              }
            }
            System.out.printf(
                Locale.ROOT,
                "  round %d/%d  %-18s %-5s %d thread(s): %7.2f M ops/s%n",
                round + 1,
                plan.forks(),
                impl,
                r.getParams().getParam("keys"),
                threads,
                r.getPrimaryResult().getScore());
          }
        }
      }
      lastRound = Duration.between(roundStart, Instant.now());
    }
    List<Figure> out = new ArrayList<>();
    stats.forEach(
        (key, s) -> {
          String[] k = key.split("/");
          double[] m =
              Stats.medianWithInterval(
                  s.stream().mapToDouble(Double::doubleValue).toArray(), CONFIDENCE);
          out.add(new Figure(k[0], k[1], Integer.parseInt(k[2]), m[0], m[1], m[2], s.size()));
        });
    return out;
  }
}
