package dev.modelkeeper.core;

/**
 * A loaded model. Implementations must be safe to use from several threads at once when they are
 * used for inference. The manager never calls {@link #clearCache()} concurrently with the model's
 * construction or with another {@code clearCache()}, never while a lease on it is open, and never
 * again once it has returned normally; after it threw, the model stays registered and may be
 * cleared again later.
 */
public interface Model {

  /** Releases everything the model holds (native memory, files, sessions). May throw. */
  void clearCache() throws Exception;

  /**
   * The bytes this model keeps resident, or a negative number when unknown. Read once after the
   * model is constructed, to correct the size predicted before loading.
   */
  default long sizeBytes() {
    return -1;
  }
}
