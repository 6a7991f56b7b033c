package dev.modelkeeper.core;

import java.util.List;
import java.util.Set;

/**
 * A read-only view of a manager's bookkeeping, for tests, metrics and operators: every method is a
 * snapshot that changes nothing. Thread-safe.
 */
public interface Diagnostics {

  /** Registered identifiers, least recently used first (see {@link Residents#leastRecentFirst}). */
  List<String> lruOrder();

  /** Identifiers that have a lifecycle entry now, in use or not (nothing leaks when idle). */
  Set<String> lifecycleTable();

  /**
   * Callers now reserving the lifecycle of {@code resolvedId} (holder and waiters); 0 without
   * entry.
   */
  int reservations(String resolvedId);

  /**
   * Budget slots taken by resident, unloading and loading models (without a budget: such models).
   */
  int usedSlots();

  /** Bytes reserved by resident, unloading and loading models (unknown sizes count 0). */
  long usedBytes();

  /** Identifiers a budget never evicts; empty without a budget. */
  Set<String> pinned();
}
