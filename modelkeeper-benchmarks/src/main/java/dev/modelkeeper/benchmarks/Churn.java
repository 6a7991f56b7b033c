package dev.modelkeeper.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import org.HdrHistogram.Histogram;

/**
 * The churn workload (the shape of the public Roboflow soak): a few models over a smaller budget,
 * closed-loop client threads that pick a model at random, no retries, a fixed duration. Not
 * thread-safe: one caller runs one churn at a time.
 */
final class Churn {

  /** The workload; durations are wall time. */
  record Config(
      int models,
      int budget,
      long loadMillis,
      long workMinMicros,
      long workMaxMicros,
      Duration warmup,
      Duration measure) {}

  /**
   * What one design did in the measured window. {@code good} requests got a model, worked on it and
   * it was not cleared meanwhile; latency percentiles are over those, in nanoseconds. {@code
   * maxLive} and {@code meanLive} count model instances that existed (constructed, not cleared):
   * the peak, and the average sampled every millisecond.
   */
  record Result(
      String design,
      int threads,
      double seconds,
      long good,
      long failed,
      long clearedInUse,
      long loads,
      long evictions,
      long duplicateConstructors,
      int maxLive,
      double meanLive,
      long p50,
      long p95,
      long p99,
      Map<String, Long> failuresByType) {

    double throughput() {
      return good / seconds;
    }
  }

  /** How often the harness samples the number of live models (for their time average). */
  private static final long SAMPLE_NANOS = 1_000_000;

  private Churn() {}

  /**
   * Runs {@code threads} clients against the design that {@code factory} builds over a fresh world.
   */
  static Result run(Config c, int threads, BiFunction<FakeWorld, Integer, Design> factory)
      throws InterruptedException {
    FakeWorld world = new FakeWorld(c.loadMillis());
    Design design = factory.apply(world, c.budget());
    String[] ids = new String[c.models()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = "churn-" + i;
    }
    long start = System.nanoTime();
    long measureFrom = start + c.warmup().toNanos();
    long end = measureFrom + c.measure().toNanos();
    LongAdder failed = new LongAdder();
    Map<String, Long> byType = new ConcurrentHashMap<>();
    List<Histogram> latencies = new ArrayList<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Histogram mine = new Histogram(3); // each worker its own; merged after joining
      latencies.add(mine);
      SplittableRandom random = new SplittableRandom(31L * t + threads);
      Thread w =
          new Thread(
              () -> {
                for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                  String id = ids[random.nextInt(ids.length)];
                  long work = 1_000L * random.nextLong(c.workMinMicros(), c.workMaxMicros() + 1);
                  boolean counted = now >= measureFrom;
                  try {
                    boolean ok = design.serve(id, work);
                    if (counted && ok) {
                      mine.recordValue(System.nanoTime() - now);
                    }
                  } catch (RuntimeException e) {
                    if (counted) {
                      failed.increment();
                      byType.merge(e.getClass().getSimpleName(), 1L, Long::sum);
                    }
                  }
                }
              },
              design.name() + "-client-" + t);
      w.setDaemon(true);
      workers.add(w);
    }
    workers.forEach(Thread::start);
    FakeWorld.sleepNanos(measureFrom - System.nanoTime());
    FakeWorld.Counters before = world.counters();
    long liveSum = 0;
    long liveSamples = 0;
    for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
      liveSum += world.live();
      liveSamples++;
      FakeWorld.sleepNanos(Math.min(SAMPLE_NANOS, end - now));
    }
    FakeWorld.Counters window = world.counters().minus(before);
    for (Thread w : workers) {
      w.join(120_000);
      if (w.isAlive()) {
        throw new IllegalStateException(w.getName() + " still running 2 minutes after the end");
      }
    }
    Histogram all = new Histogram(3);
    latencies.forEach(all::add);
    return new Result(
        design.name(),
        threads,
        c.measure().toNanos() / 1e9,
        all.getTotalCount(),
        failed.sum(),
        window.clearedInUse(),
        window.constructorCalls(),
        window.clears(),
        window.duplicateConstructors(),
        window.maxLive(),
        liveSamples == 0 ? 0 : (double) liveSum / liveSamples,
        all.getValueAtPercentile(50),
        all.getValueAtPercentile(95),
        all.getValueAtPercentile(99),
        new TreeMap<>(byType));
  }
}
