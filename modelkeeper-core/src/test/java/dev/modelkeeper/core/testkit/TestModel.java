package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.Model;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A fake model that counts its clears, can fail or pause inside {@code clearCache()}, and records a
 * violation when it is cleared while test code is using it. Thread-safe.
 */
public final class TestModel implements Model {
  public final String id;
  public final String requestedId;
  private final long size;
  private final LifecycleMonitor monitor;
  private final AtomicInteger clears = new AtomicInteger();
  private final AtomicInteger inUse = new AtomicInteger();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private volatile RuntimeException clearFailure;
  private volatile Gate clearGate;
  private volatile BooleanSupplier randomClearFailure = () -> false;
  private final AtomicInteger failingClears = new AtomicInteger();
  private volatile Runnable duringClear = () -> {};

  public TestModel(String id, String requestedId, long size, LifecycleMonitor monitor) {
    this.id = id;
    this.requestedId = requestedId;
    this.size = size;
    this.monitor = monitor;
  }

  /** A standalone model, for managers built with models already resident. */
  public static TestModel of(String id) {
    return new TestModel(id, id, -1, new LifecycleMonitor());
  }

  @Override
  public void clearCache() throws Exception {
    monitor.enter(id, "clearCache");
    try {
      if (inUse.get() != 0) {
        violations.add("'" + id + "' cleared while in use by " + inUse.get() + " caller(s)");
      }
      duringClear.run();
      Gate g = clearGate;
      if (g != null) {
        clearGate = null;
        g.pass();
      }
      RuntimeException f = clearFailure;
      if (f != null) {
        throw f;
      }
      if (failingClears.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IllegalStateException("injected failure of a first clearCache() of '" + id + "'");
      }
      if (randomClearFailure.getAsBoolean()) {
        throw new IllegalStateException("injected clearCache() failure of '" + id + "'");
      }
      clears.incrementAndGet();
      monitor.died(size);
    } finally {
      monitor.exit(id);
    }
  }

  @Override
  public long sizeBytes() {
    return size;
  }

  /**
   * Marks the start of "inference" on this model; clearing it before {@link #endUse} is a
   * violation.
   */
  public void beginUse() {
    if (clears.get() > 0) {
      violations.add("'" + id + "' used after it was cleared");
    }
    inUse.incrementAndGet();
  }

  public void endUse() {
    inUse.decrementAndGet();
  }

  /** Successful clears (a failed clearCache() does not count). */
  public int clears() {
    return clears.get();
  }

  public List<String> violations() {
    return List.copyOf(violations);
  }

  /** Makes every later clearCache() throw {@code failure} (null: succeed again). */
  public TestModel failClearWith(RuntimeException failure) {
    this.clearFailure = failure;
    return this;
  }

  /** Makes clearCache() fail whenever {@code fails} says so. */
  public TestModel failClearWhen(BooleanSupplier fails) {
    this.randomClearFailure = fails;
    return this;
  }

  /** Makes the next {@code n} clearCache() calls throw. */
  public TestModel failNextClears(int n) {
    this.failingClears.set(n);
    return this;
  }

  /** Runs inside every clearCache() (after the overlap check), e.g. to add latency. */
  public TestModel duringClear(Runnable action) {
    this.duringClear = action;
    return this;
  }

  /** Makes the next clearCache() pause at {@code gate}. */
  public TestModel pauseNextClear(Gate gate) {
    this.clearGate = gate;
    return this;
  }

  @Override
  public String toString() {
    return "TestModel[" + id + "]";
  }
}
