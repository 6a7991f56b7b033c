package dev.modelkeeper.benchmarks;

import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The fake models of the harnesses and the counters that judge every design the same way: a load
 * sleeps for a fixed time, {@link FakeModel#work} parks for a while and notices whether the model
 * was cleared under it. Thread-safe: every design under test calls it from many threads.
 */
final class FakeWorld implements ModelRegistry {

  private final long loadNanos;
  private final ConcurrentHashMap<String, AtomicInteger> constructing = new ConcurrentHashMap<>();
  private final AtomicInteger live = new AtomicInteger();
  private final AtomicInteger maxLive = new AtomicInteger();
  private final LongAdder constructorCalls = new LongAdder();
  private final LongAdder duplicateConstructors = new LongAdder();
  private final LongAdder clears = new LongAdder();
  private final LongAdder clearedInUse = new LongAdder();
  private final LongAdder loadNanosTotal = new LongAdder();

  /** A world whose loads each take {@code loadMillis} (a sleep, so cores do not limit it). */
  FakeWorld(long loadMillis) {
    this.loadNanos = TimeUnit.MILLISECONDS.toNanos(loadMillis);
  }

  /** The registry view, for {@link dev.modelkeeper.core.BaseModelManager}. */
  @Override
  public ModelFactory getModel(String resolvedModelId, String apiKey) {
    if (resolvedModelId == null) {
      throw new ModelNotFoundException("no model 'null'");
    }
    return (modelId, key) -> create(modelId);
  }

  /**
   * Constructs a model of {@code id}: counts the call, notes whether another constructor of the
   * same identifier is running (a duplicate), and sleeps for the load time.
   */
  FakeModel create(String id) {
    long start = System.nanoTime();
    constructorCalls.increment();
    AtomicInteger running = constructing.computeIfAbsent(id, k -> new AtomicInteger());
    if (running.incrementAndGet() > 1) {
      duplicateConstructors.increment();
    }
    try {
      sleepNanos(loadNanos);
      int now = live.incrementAndGet();
      maxLive.accumulateAndGet(now, Math::max);
      return new FakeModel(id, this);
    } finally {
      running.decrementAndGet();
      loadNanosTotal.add(System.nanoTime() - start);
    }
  }

  /** Model instances that exist now (constructed and not yet cleared). */
  int live() {
    return live.get();
  }

  void cleared() {
    clears.increment();
    live.decrementAndGet();
  }

  void clearedInUse() {
    clearedInUse.increment();
  }

  /** An immutable copy of the counters now. */
  Counters counters() {
    return new Counters(
        constructorCalls.sum(),
        duplicateConstructors.sum(),
        clears.sum(),
        clearedInUse.sum(),
        loadNanosTotal.sum(),
        live.get(),
        maxLive.get());
  }

  /** One instantly loaded model per identifier, for the hot path (no sleep). */
  static Map<String, FakeModel> instant(String[] ids) {
    FakeWorld w = new FakeWorld(0);
    Map<String, FakeModel> m = new ConcurrentHashMap<>();
    for (String id : ids) {
      m.put(id, w.create(id));
    }
    return m;
  }

  static void sleepNanos(long nanos) {
    long deadline = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  /** Counter values at one instant; differences of two snapshots give a window's figures. */
  record Counters(
      long constructorCalls,
      long duplicateConstructors,
      long clears,
      long clearedInUse,
      long loadNanosTotal,
      int live,
      int maxLive) {

    Counters minus(Counters before) {
      return new Counters(
          constructorCalls - before.constructorCalls,
          duplicateConstructors - before.duplicateConstructors,
          clears - before.clears,
          clearedInUse - before.clearedInUse,
          loadNanosTotal - before.loadNanosTotal,
          live,
          maxLive);
    }
  }

  /** A fake loaded model; thread-safe (a volatile flag). */
  static final class FakeModel implements Model {
    private final String id;
    private final FakeWorld world;
    private volatile boolean cleared;

    FakeModel(String id, FakeWorld world) {
      this.id = id;
      this.world = world;
    }

    String id() {
      return id;
    }

    /**
     * Serves one request: parks for {@code nanos} and reports (once) when the model was cleared
     * before or during the work. Returns false in that case.
     */
    boolean work(long nanos) {
      boolean ok = !cleared;
      if (ok) {
        sleepNanos(nanos);
        ok = !cleared;
      }
      if (!ok) {
        world.clearedInUse();
      }
      return ok;
    }

    boolean isCleared() {
      return cleared;
    }

    @Override
    public synchronized void clearCache() {
      if (!cleared) {
        cleared = true;
        world.cleared();
      }
    }
  }
}
