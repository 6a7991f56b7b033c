package dev.modelkeeper.core;

import org.jspecify.annotations.Nullable;

/**
 * Builds one model instance. Called on the thread that performs the load, while the manager owns
 * the lifecycle of the resolved identifier; at most one call per resolved identifier runs at once.
 */
@FunctionalInterface
public interface ModelFactory {

  /**
   * Constructs the model; {@code modelId} is the identifier the caller asked for (not the alias).
   */
  Model create(String modelId, @Nullable String apiKey) throws Exception;

  /**
   * The bytes the model is expected to take once loaded, or a negative number when unknown. Used to
   * reserve room in a byte budget before {@link #create} runs.
   */
  default long predictedSizeBytes(String modelId) {
    return -1;
  }
}
