package dev.modelkeeper.core;

import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * What a manager lets its {@link ResidencyPolicy} do with the resident models: read their LRU order
 * and evict idle ones. Handed out by {@link ModelManager#attachPolicy} to the policy only.
 * Thread-safe.
 */
public interface Residents {

  /**
   * Registered identifiers, least recently used first: exact LRU over every read recorded so far
   * (recorded reads are drained first; a read lost by the lossy read buffer is not counted). A
   * snapshot.
   */
  List<String> leastRecentFirst();

  /**
   * Clears and unregisters {@code resolvedId} only if nobody holds a lease on it and no lifecycle
   * operation of it is in progress; never waits for either.
   */
  EvictionOutcome evict(String resolvedId, RemovalCause cause);

  /**
   * Evicts, with cause {@link RemovalCause#IDLE}, every model unused for at least {@code idle} by
   * the manager's ticker, except those {@code exempt} or leased; a model found leased counts as
   * used now. Returns how many were evicted.
   */
  int expire(Duration idle, Predicate<String> exempt);
}
