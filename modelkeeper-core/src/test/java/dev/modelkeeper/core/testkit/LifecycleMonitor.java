package dev.modelkeeper.core.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records every constructor and {@code clearCache()} run per identifier and flags any two that
 * overlap for the same identifier. Also counts live models (a constructor started and its model not
 * cleared yet, failed constructions excluded once they end) with their high-water marks, which a
 * budget must keep within its limits at every instant. Thread-safe.
 */
public final class LifecycleMonitor {
  private final Map<String, AtomicInteger> active = new ConcurrentHashMap<>();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private final AtomicInteger live = new AtomicInteger();
  private final AtomicLong liveBytes = new AtomicLong();
  private final AtomicInteger peakLive = new AtomicInteger();
  private final AtomicLong peakLiveBytes = new AtomicLong();

  /**
   * Marks the start of a lifecycle operation of {@code id}; records an overlap if one is running.
   */
  public void enter(String id, String what) {
    int n = active.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    if (n > 1) {
      violations.add(
          what + " of '" + id + "' overlapped " + (n - 1) + " other lifecycle operation(s)");
    }
  }

  public void exit(String id) {
    active.get(id).decrementAndGet();
  }

  public List<String> violations() {
    return List.copyOf(violations);
  }

  /** A constructor of a model taking {@code bytes} (negative: unknown) started. */
  public void born(long bytes) {
    int n = live.incrementAndGet();
    long b = liveBytes.addAndGet(Math.max(0, bytes));
    peakLive.accumulateAndGet(n, Math::max);
    peakLiveBytes.accumulateAndGet(b, Math::max);
  }

  /** A constructor failed, or a model's {@code clearCache()} returned. */
  public void died(long bytes) {
    live.decrementAndGet();
    liveBytes.addAndGet(-Math.max(0, bytes));
  }

  /** Models constructed or being constructed and not cleared. */
  public int live() {
    return live.get();
  }

  /** The most models alive at once (constructing included). */
  public int peakLive() {
    return peakLive.get();
  }

  /** The most bytes alive at once, by the sizes the models report. */
  public long peakLiveBytes() {
    return peakLiveBytes.get();
  }
}
