package dev.modelkeeper.core;

/**
 * Receives lifecycle events of a manager. Each event of one identifier is delivered on the thread
 * that performs that identifier's lifecycle operation, while that operation still owns the
 * identifier's lifecycle and while no lock shared by other identifiers is held; events of one
 * identifier therefore arrive in lifecycle order. Implementations must be thread-safe: events of
 * different identifiers arrive concurrently.
 */
public interface LifecycleListener {

  /**
   * A load of {@code modelId} is about to construct the model (every {@link ResidencyPolicy} has
   * admitted it). Throwing aborts the load without a trace (the exception reaches the caller and
   * every joiner). Budgets are policies, not listeners: a listener should not block.
   */
  default void loading(String modelId, long predictedBytes) {}

  /** The model was constructed and is about to become leasable. */
  default void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {}

  /** A load that was announced by {@link #loading} did not produce a model. */
  default void loadFailed(String modelId, Throwable cause) {}

  /** {@code clearCache()} returned and the model is about to be unregistered. */
  default void removed(String modelId, Model model, RemovalCause cause) {}

  /**
   * A model that an eviction may have found busy may be evictable now: its last lease closed, or it
   * entered READY (after loading, a drain timeout or a failed clear). Runs on the thread that
   * closed the lease or ended the transition; may be spurious.
   */
  default void idle(String modelId) {}
}
