package dev.modelkeeper.core;

/**
 * A loaded model. Implementations must be safe to use from several threads at once when they are
 * used for inference; the manager calls {@link #clearCache()} at most once per instance, never
 * concurrently with its construction, and never while a lease on it is open.
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
