package dev.modelkeeper.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The in-process workloads that no load tool can drive, because they measure the lifecycle manager
 * itself on sleep-based fake models: the stampede, parallel loads and churn of the design's
 * BENCHMARKS.md (workloads 2-4), each design beside its baselines. Writes one CSV per workload
 * ({@code stampede.csv}, {@code parallel.csv}, {@code churn.csv}) into {@code --out} and prints a
 * line per round; {@code scripts/bench/render.py} turns the CSVs into Markdown. The hot path is
 * JMH's ({@link HotPathBenchmark}, run by {@code scripts/bench.sh}). Not thread-safe; it is the
 * program's entry point.
 *
 * <p>{@code java -jar benchmarks.jar [stampede] [parallel] [churn] [--quick] [--out DIR]}
 */
public final class BenchMain {

  /** Timed rounds of each cold-load design; one more, first and unreported, warms the JIT up. */
  private static final int ROUNDS = 5;

  private static final int STAMPEDE_THREADS = 1_000;
  private static final long COLD_LOAD_MILLIS = 200;
  private static final int PARALLEL_MODELS = 8;
  private static final List<Integer> CHURN_THREADS = List.of(2, 8);

  private static final Churn.Config CHURN =
      new Churn.Config(4, 2, 5, 200, 1_000, Duration.ofSeconds(2), Duration.ofSeconds(10));
  private static final Churn.Config CHURN_QUICK =
      new Churn.Config(4, 2, 5, 200, 1_000, Duration.ofMillis(500), Duration.ofSeconds(2));

  private static final List<String> PARTS = List.of("stampede", "parallel", "churn");

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    Set<String> parts = new LinkedHashSet<>();
    boolean quick = false;
    Path out = Path.of("bench-results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--out" -> out = Path.of(args[++i]);
        default -> {
          if (!PARTS.contains(args[i])) {
            System.err.println(
                "unknown argument '"
                    + args[i]
                    + "'; usage: java -jar benchmarks.jar [stampede] [parallel] [churn]"
                    + " [--quick] [--out DIR]");
            System.exit(2);
          }
          parts.add(args[i]);
        }
      }
    }
    if (parts.isEmpty()) {
      parts.addAll(PARTS);
    }
    Files.createDirectories(out);
    int rounds = quick ? 1 : ROUNDS;
    if (parts.contains("stampede")) {
      List<BiFunction<FakeWorld, Integer, Design>> designs = new ArrayList<>(designs());
      designs.add(Design::floor);
      coldLoads(out.resolve("stampede.csv"), designs, rounds, true);
    }
    if (parts.contains("parallel")) {
      coldLoads(out.resolve("parallel.csv"), designs(), rounds, false);
    }
    if (parts.contains("churn")) {
      churn(out.resolve("churn.csv"), quick ? CHURN_QUICK : CHURN);
    }
    System.out.println("wrote " + parts + " into " + out);
  }

  private static void coldLoads(
      Path csv, List<BiFunction<FakeWorld, Integer, Design>> designs, int rounds, boolean stampede)
      throws IOException, InterruptedException {
    try (PrintWriter w = csv(csv)) {
      w.println("design,round,threads,models,constructor_calls,load_ms,wall_ms,failures");
      for (BiFunction<FakeWorld, Integer, Design> d : designs) {
        for (int round = 0; round <= rounds; round++) {
          ColdLoads.Round r =
              stampede
                  ? ColdLoads.stampede(STAMPEDE_THREADS, COLD_LOAD_MILLIS, d)
                  : ColdLoads.parallel(PARALLEL_MODELS, COLD_LOAD_MILLIS, d);
          String line =
              String.format(
                  Locale.ROOT,
                  "%s,%d,%d,%d,%d,%.3f,%.3f,%d",
                  r.design(),
                  round,
                  r.threads(),
                  r.models(),
                  r.constructorCalls(),
                  r.loadNanos() / 1e6,
                  r.wallNanos() / 1e6,
                  r.failures());
          System.out.println((stampede ? "stampede " : "parallel ") + line);
          if (round > 0) {
            w.println(line); // round 0 warms the JIT up and is not reported
          }
        }
      }
    }
  }

  private static void churn(Path csv, Churn.Config config)
      throws IOException, InterruptedException {
    try (PrintWriter w = csv(csv)) {
      w.println(
          "design,threads,seconds,good,failed,cleared_in_use,loads,evictions,"
              + "duplicate_constructors,max_live,mean_live,p50_ms,p95_ms,p99_ms,failures_by_type");
      for (int threads : CHURN_THREADS) {
        for (BiFunction<FakeWorld, Integer, Design> d : designs()) {
          Churn.Result r = Churn.run(config, threads, d);
          String line =
              String.format(
                  Locale.ROOT,
                  "%s,%d,%.1f,%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%s",
                  r.design(),
                  threads,
                  r.seconds(),
                  r.good(),
                  r.failed(),
                  r.clearedInUse(),
                  r.loads(),
                  r.evictions(),
                  r.duplicateConstructors(),
                  r.maxLive(),
                  r.meanLive(),
                  r.p50() / 1e6,
                  r.p95() / 1e6,
                  r.p99() / 1e6,
                  r.failuresByType().toString().replace(',', ';'));
          System.out.println("churn " + line);
          w.println(line);
        }
      }
    }
  }

  private static PrintWriter csv(Path file) throws IOException {
    return new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8));
  }

  private static List<BiFunction<FakeWorld, Integer, Design>> designs() {
    return List.of(Design::modelKeeper, Design::caffeine, Design::oneLock);
  }
}
