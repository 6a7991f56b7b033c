package dev.modelkeeper.core;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Keeps models resident by resolved identifier and serializes every load and unload of one
 * identifier. Implementations are thread-safe.
 *
 * <p>The resolved identifier is {@code modelIdAlias} when given, else {@code modelId}. The registry
 * is asked for the resolved identifier, the factory receives the requested {@code modelId}, and the
 * model is registered, locked and leased under the resolved identifier. A {@link ModelKey} carries
 * that identity from where a request enters; the {@code String} methods build one and delegate. The
 * {@code apiKey} of the older methods is accepted and ignored.
 */
public interface ModelManager {

  /** Loads the model unless it is resident; a warm call only records recency. */
  void addModel(String modelId, @Nullable String apiKey);

  /** As {@link #addModel(String, String, String)} for a key built where the request entered. */
  default void addModel(ModelKey key) {
    addModel(key.modelId(), null, key.alias());
  }

  /** As {@link #acquire(String, String, String)} for a key built where the request entered. */
  default ModelLease acquire(ModelKey key) {
    return acquire(key.modelId(), null, key.alias());
  }

  /** As {@link #acquireAsync(String, String, String)} for a key built where the request entered. */
  default CompletableFuture<ModelLease> acquireAsync(ModelKey key) {
    return acquireAsync(key.modelId(), null, key.alias());
  }

  /** As {@link #addModel(String, String)}, registered under {@code modelIdAlias} when not null. */
  void addModel(String modelId, @Nullable String apiKey, @Nullable String modelIdAlias);

  /**
   * Waits for open leases to close, clears the model and unregisters it. A logged no-op when the
   * identifier is not loaded.
   *
   * @throws ModelUnloadException when {@code clearCache()} throws (the model stays registered)
   * @throws LeaseDrainTimeoutException when leases stay open past the drain timeout
   */
  void remove(String modelId);

  /** Removes every model; failures do not stop the others and are reported together at the end. */
  void clear();

  boolean contains(String modelId);

  /**
   * The resident model, without a lease: it may be evicted at any moment afterwards. Prefer {@link
   * #acquire}.
   *
   * @throws ModelNotLoadedException when the model is not resident
   */
  Model get(String modelId);

  /** A snapshot of the resident (registered) identifiers. */
  Set<String> keys();

  int size();

  /** A snapshot of every identifier that is loading, resident or unloading. */
  List<ModelDescription> describeModels();

  /** Gets or loads the model and leases it, atomically: the lease never sees "not loaded". */
  ModelLease acquire(String modelId, @Nullable String apiKey);

  ModelLease acquire(String modelId, @Nullable String apiKey, @Nullable String modelIdAlias);

  /**
   * As {@link #acquire(String, String, String)} without blocking the calling thread: a resident
   * model is leased at once, anything else completes on the manager's executor.
   */
  CompletableFuture<ModelLease> acquireAsync(
      String modelId, @Nullable String apiKey, @Nullable String modelIdAlias);

  default CompletableFuture<ModelLease> acquireAsync(String modelId, @Nullable String apiKey) {
    return acquireAsync(modelId, apiKey, null);
  }

  /**
   * Clears and unregisters a resident model only if nobody holds a lease on it and no lifecycle
   * operation of it is in progress; never waits for either.
   *
   * @deprecated budgets evict through the {@link Residents} handed to their {@link
   *     ResidencyPolicy}; this delegates to the same eviction.
   */
  @Deprecated
  EvictionOutcome evictIfIdle(String modelId, RemovalCause cause);

  /**
   * Attaches a budget: the manager consults {@code policy} on every load and removal (see {@link
   * ResidencyPolicy}) and returns the handle through which the policy may evict. Policies are
   * consulted in the order attached. Decorators pass this through to the manager that owns the
   * lifecycles.
   *
   * @throws UnsupportedOperationException when this manager does not own lifecycles
   */
  default Residents attachPolicy(ResidencyPolicy policy) {
    throw new UnsupportedOperationException(getClass().getName() + " cannot attach a policy");
  }

  /** A read-only view of this manager's bookkeeping (LRU order, lifecycle table, budget slots). */
  default Diagnostics diagnostics() {
    throw new UnsupportedOperationException(getClass().getName() + " has no diagnostics");
  }

  /**
   * Registers a listener for lifecycle events of every identifier (see {@link LifecycleListener}).
   */
  void addListener(LifecycleListener listener);

  /** An immutable snapshot of counters and gauges. */
  ManagerStats stats();
}
