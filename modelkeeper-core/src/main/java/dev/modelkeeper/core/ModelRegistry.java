package dev.modelkeeper.core;

import org.jspecify.annotations.Nullable;

/**
 * Maps a resolved model identifier to the factory that builds it. Must be thread-safe: the manager
 * consults it from the loading thread of each identifier.
 */
@FunctionalInterface
public interface ModelRegistry {

  /**
   * Returns the factory for {@code resolvedModelId}.
   *
   * @throws ModelNotFoundException when the identifier is unknown
   */
  ModelFactory getModel(String resolvedModelId, @Nullable String apiKey);
}
