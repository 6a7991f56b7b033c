package dev.modelkeeper.core;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The identity of a request for a model, resolved once where the request enters: the identifier the
 * caller asked for and an optional alias. The model is registered, locked, queued and leased under
 * {@link #resolvedId()} (the alias when given, else the identifier); its factory receives {@link
 * #modelId()}. Immutable and thread-safe; equal when both parts are equal.
 */
public final class ModelKey {

  private final String modelId;
  private final @Nullable String alias;

  private ModelKey(String modelId, @Nullable String alias) {
    this.modelId = Objects.requireNonNull(modelId, "modelId");
    this.alias = alias;
  }

  /** A key for {@code modelId} without alias. */
  public static ModelKey of(String modelId) {
    return new ModelKey(modelId, null);
  }

  /** A key for {@code modelId} registered under {@code alias}; a null alias means none. */
  public static ModelKey of(String modelId, @Nullable String alias) {
    return new ModelKey(modelId, alias);
  }

  /** The identifier the caller asked for; what the factory receives. */
  public String modelId() {
    return modelId;
  }

  /** The alias, or null. */
  public @Nullable String alias() {
    return alias;
  }

  /** The identifier the model is registered, locked and leased under. */
  public String resolvedId() {
    return alias != null ? alias : modelId;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ModelKey
        && ((ModelKey) o).modelId.equals(modelId)
        && Objects.equals(((ModelKey) o).alias, alias);
  }

  @Override
  public int hashCode() {
    return modelId.hashCode() * 31 + Objects.hashCode(alias);
  }

  @Override
  public String toString() {
    return alias != null ? modelId + " as " + alias : modelId;
  }
}
