package dev.modelkeeper.core;

/**
 * A budget that a manager consults about which models may be resident (see {@link
 * WithFixedSizeCache}); attached with {@link ModelManager#attachPolicy}. Implementations must be
 * thread-safe. Every method runs on the thread of the identifier's lifecycle operation, while that
 * operation owns the identifier and while no lock shared by other identifiers is held, so the calls
 * of one identifier arrive in lifecycle order and a policy's view follows the registry exactly.
 */
public interface ResidencyPolicy {

  /**
   * A load of {@code resolvedId} is about to construct its model: reserve room, evicting idle
   * models through {@link Residents} or waiting (bounded by a deadline). Throwing refuses the load,
   * which then leaves no trace; {@link #loadFailed} follows.
   */
  void admit(String resolvedId, long predictedBytes);

  /**
   * The model was constructed with {@code sizeBytes} (or its prediction) and is about to be
   * leasable; it is already listed by {@link Residents#leastRecentFirst} (evicting it answers BUSY
   * until it is READY).
   */
  void loaded(String resolvedId, long sizeBytes);

  /** A load that {@link #admit} was called for did not produce a model. */
  void loadFailed(String resolvedId);

  /**
   * {@code clearCache()} returned; the model is about to be unregistered. It stays listed by {@link
   * Residents#leastRecentFirst} (evicting it answers BUSY) until every policy heard this.
   */
  void removed(String resolvedId, RemovalCause cause);

  /**
   * A model that {@link Residents#evict} may have found busy may be evictable now: its last lease
   * closed, or it entered READY. May be spurious. Runs on the thread that closed the lease or ended
   * the transition.
   */
  void idle(String resolvedId);
}
