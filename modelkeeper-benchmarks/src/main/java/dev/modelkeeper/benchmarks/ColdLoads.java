package dev.modelkeeper.benchmarks;

import java.util.function.BiFunction;

/**
 * The two cold-load workloads: a stampede (many threads, one cold model) and parallel loads (one
 * thread per cold model). Each round builds a fresh world and design, opens a {@link StartingGate}
 * and counts constructor calls. Not thread-safe: one caller runs one round at a time.
 */
final class ColdLoads {

  /**
   * One round: {@code threads} callers released at once, the constructor calls they caused, the
   * mean time one load took, and the wall time until the last caller had its model.
   */
  record Round(
      String design,
      int threads,
      int models,
      long constructorCalls,
      long loadNanos,
      long wallNanos,
      long failures,
      String firstFailure) {

    double wallOverLoad() {
      return (double) wallNanos / loadNanos;
    }

    double extraMillis() {
      return (wallNanos - loadNanos) / 1e6;
    }
  }

  private ColdLoads() {}

  /** {@code threads} callers ask for one cold model whose load takes {@code loadMillis}. */
  static Round stampede(
      int threads, long loadMillis, BiFunction<FakeWorld, Integer, Design> factory)
      throws InterruptedException {
    return round(threads, 1, loadMillis, factory);
  }

  /** One caller per model for {@code models} different cold models; the budget holds them all. */
  static Round parallel(int models, long loadMillis, BiFunction<FakeWorld, Integer, Design> factory)
      throws InterruptedException {
    return round(models, models, loadMillis, factory);
  }

  private static Round round(
      int threads, int models, long loadMillis, BiFunction<FakeWorld, Integer, Design> factory)
      throws InterruptedException {
    FakeWorld world = new FakeWorld(loadMillis);
    Design design = factory.apply(world, Math.max(models, 2));
    String[] ids = new String[models];
    for (int i = 0; i < models; i++) {
      ids[i] = "cold-" + i;
    }
    StartingGate.Outcome out =
        StartingGate.release(
            threads,
            i -> {
              if (!design.serve(ids[i % models], 0)) {
                throw new IllegalStateException("got a cleared model");
              }
            });
    FakeWorld.Counters c = world.counters();
    long perLoad = c.constructorCalls() == 0 ? 0 : c.loadNanosTotal() / c.constructorCalls();
    return new Round(
        design.name(),
        threads,
        models,
        c.constructorCalls(),
        perLoad,
        out.wallNanos(),
        out.failures(),
        out.firstFailure() == null ? null : String.valueOf(out.firstFailure()));
  }
}
