package dev.modelkeeper.core.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records every constructor and {@code clearCache()} run per identifier and flags any two that
 * overlap for the same identifier. Thread-safe.
 */
public final class LifecycleMonitor {
  private final Map<String, AtomicInteger> active = new ConcurrentHashMap<>();
  private final List<String> violations = new CopyOnWriteArrayList<>();

  /** Marks the start of a lifecycle operation of {@code id}; records an overlap if one is running. */
  public void enter(String id, String what) {
    int n = active.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    if (n > 1) {
      violations.add(what + " of '" + id + "' overlapped " + (n - 1) + " other lifecycle operation(s)");
    }
  }

  public void exit(String id) {
    active.get(id).decrementAndGet();
  }

  public List<String> violations() {
    return List.copyOf(violations);
  }
}
