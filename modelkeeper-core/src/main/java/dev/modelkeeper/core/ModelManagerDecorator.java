package dev.modelkeeper.core;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Delegates every method to the wrapped manager; a subclass overrides only what it changes, so
 * {@code new ModelManagerDecorator(m) {}} is a transparent wrapper. Thread-safe when the delegate
 * is. A decorator never answers from its own unlocked view of the delegate's state: it either
 * passes the call through or reacts to the delegate's lifecycle events.
 */
public abstract class ModelManagerDecorator implements ModelManager {

  protected final ModelManager delegate;

  protected ModelManagerDecorator(ModelManager delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  @Override
  public void addModel(String modelId, @Nullable String apiKey) {
    delegate.addModel(modelId, apiKey);
  }

  @Override
  public void addModel(String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    delegate.addModel(modelId, apiKey, modelIdAlias);
  }

  @Override
  public void addModel(ModelKey key) {
    delegate.addModel(key);
  }

  @Override
  public ModelLease acquire(ModelKey key) {
    return delegate.acquire(key);
  }

  @Override
  public CompletableFuture<ModelLease> acquireAsync(ModelKey key) {
    return delegate.acquireAsync(key);
  }

  @Override
  public void remove(String modelId) {
    delegate.remove(modelId);
  }

  @Override
  public void clear() {
    delegate.clear();
  }

  @Override
  public boolean contains(String modelId) {
    return delegate.contains(modelId);
  }

  @Override
  public Model get(String modelId) {
    return delegate.get(modelId);
  }

  @Override
  public Set<String> keys() {
    return delegate.keys();
  }

  @Override
  public int size() {
    return delegate.size();
  }

  @Override
  public List<ModelDescription> describeModels() {
    return delegate.describeModels();
  }

  @Override
  public ModelLease acquire(String modelId, @Nullable String apiKey) {
    return delegate.acquire(modelId, apiKey);
  }

  @Override
  public ModelLease acquire(
      String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    return delegate.acquire(modelId, apiKey, modelIdAlias);
  }

  @Override
  public CompletableFuture<ModelLease> acquireAsync(
      String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    return delegate.acquireAsync(modelId, apiKey, modelIdAlias);
  }

  @Override
  @Deprecated
  public EvictionOutcome evictIfIdle(String modelId, RemovalCause cause) {
    return delegate.evictIfIdle(modelId, cause);
  }

  @Override
  public Residents attachPolicy(ResidencyPolicy policy) {
    return delegate.attachPolicy(policy);
  }

  @Override
  public Diagnostics diagnostics() {
    return delegate.diagnostics();
  }

  @Override
  public void addListener(LifecycleListener listener) {
    delegate.addListener(listener);
  }

  @Override
  public ManagerStats stats() {
    return delegate.stats();
  }
}
