package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A registry of fake models with scripted behaviour per identifier: sizes, constructors that pause
 * at a gate or fail, and a record of every model it built. Thread-safe.
 */
public final class TestRegistry implements ModelRegistry {
  private final Set<String> known = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> sizes = new ConcurrentHashMap<>();
  private final Map<String, Long> actualSizes = new ConcurrentHashMap<>();
  private final Map<String, Gate> loadGates = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> failNext = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> constructions = new ConcurrentHashMap<>();
  private final List<TestModel> created = new CopyOnWriteArrayList<>();
  private final List<String> lookups = new CopyOnWriteArrayList<>();
  private final List<String> requested = new CopyOnWriteArrayList<>();
  private final LifecycleMonitor monitor = new LifecycleMonitor();
  private volatile BooleanSupplier randomLoadFailure = () -> false;
  private volatile BooleanSupplier randomClearFailure = () -> false;
  private volatile Runnable duringLoad = () -> {};
  private volatile Runnable duringClear = () -> {};
  private final Map<String, Integer> failingClears = new ConcurrentHashMap<>();

  public static TestRegistry of(String... ids) {
    TestRegistry r = new TestRegistry();
    for (String id : ids) {
      r.known.add(id);
    }
    return r;
  }

  @Override
  public ModelFactory getModel(String resolvedModelId, String apiKey) {
    lookups.add(resolvedModelId);
    if (!known.contains(resolvedModelId)) {
      throw new ModelNotFoundException("no model '" + resolvedModelId + "'");
    }
    String id = resolvedModelId;
    return new ModelFactory() {
      @Override
      public TestModel create(String modelId, String key) throws Exception {
        return construct(id, modelId);
      }

      @Override
      public long predictedSizeBytes(String modelId) {
        return sizes.getOrDefault(id, -1L);
      }
    };
  }

  private TestModel construct(String id, String modelId) throws Exception {
    monitor.enter(id, "constructor");
    long size = actualSizes.getOrDefault(id, sizes.getOrDefault(id, -1L));
    monitor.born(size);
    boolean built = false;
    try {
      constructions.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      requested.add(modelId);
      duringLoad.run();
      Gate g = loadGates.remove(id);
      if (g != null) {
        g.pass();
      }
      AtomicInteger fails = failNext.get(id);
      if (fails != null && fails.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new Exception("injected constructor failure of '" + id + "'");
      }
      if (randomLoadFailure.getAsBoolean()) {
        throw new Exception("injected random constructor failure of '" + id + "'");
      }
      TestModel m =
          new TestModel(id, modelId, size, monitor)
              .failClearWhen(randomClearFailure)
              .failNextClears(failingClears.getOrDefault(id, 0))
              .duringClear(duringClear);
      created.add(m);
      built = true;
      return m;
    } finally {
      if (!built) {
        monitor.died(size);
      }
      monitor.exit(id);
    }
  }

  public TestRegistry add(String... ids) {
    known.addAll(List.of(ids));
    return this;
  }

  /** Predicted and actual size of {@code id}. */
  public TestRegistry size(String id, long bytes) {
    sizes.put(id, bytes);
    return this;
  }

  /** Actual size of {@code id} when it differs from the prediction. */
  public TestRegistry actualSize(String id, long bytes) {
    actualSizes.put(id, bytes);
    return this;
  }

  /** The next constructor of {@code id} pauses at {@code gate}. */
  public TestRegistry pauseNextLoad(String id, Gate gate) {
    loadGates.put(id, gate);
    return this;
  }

  /** The next {@code n} constructors of {@code id} throw a checked exception. */
  public TestRegistry failNextLoads(String id, int n) {
    failNext.put(id, new AtomicInteger(n));
    return this;
  }

  public TestRegistry failRandomly(BooleanSupplier loads, BooleanSupplier clears) {
    this.randomLoadFailure = loads;
    this.randomClearFailure = clears;
    return this;
  }

  /** Runs inside every constructor (after the overlap check), e.g. to add latency. */
  public TestRegistry duringLoad(Runnable action) {
    this.duringLoad = action;
    return this;
  }

  /** Runs inside every clearCache() of the models built from now on, e.g. to add latency. */
  public TestRegistry duringClear(Runnable action) {
    this.duringClear = action;
    return this;
  }

  /** Every model of {@code id} built from now on fails its first {@code n} clearCache() calls. */
  public TestRegistry failFirstClears(String id, int n) {
    failingClears.put(id, n);
    return this;
  }

  public int constructions(String id) {
    AtomicInteger n = constructions.get(id);
    return n == null ? 0 : n.get();
  }

  public int constructions() {
    return constructions.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  public List<TestModel> created() {
    return List.copyOf(created);
  }

  /** The last model built for {@code id}. */
  public TestModel last(String id) {
    for (int i = created.size() - 1; i >= 0; i--) {
      if (created.get(i).id.equals(id)) {
        return created.get(i);
      }
    }
    throw new AssertionError("no model '" + id + "' was built");
  }

  /** Resolved identifiers the manager asked this registry for, in order. */
  public List<String> lookups() {
    return List.copyOf(lookups);
  }

  /** Model IDs the factories received, in order. */
  public List<String> requestedIds() {
    return List.copyOf(requested);
  }

  public LifecycleMonitor monitor() {
    return monitor;
  }
}
