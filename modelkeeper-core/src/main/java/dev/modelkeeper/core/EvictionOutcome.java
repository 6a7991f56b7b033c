package dev.modelkeeper.core;

/** The result of {@link ModelManager#evictIfIdle}. */
public enum EvictionOutcome {
  /** The model was cleared and unregistered. */
  EVICTED,
  /** Not resident (absent, or loaded only in another form). */
  ABSENT,
  /** Leased or in a lifecycle transition; it may become evictable soon. */
  BUSY,
  /** {@code clearCache()} threw; the model stays registered where it was. */
  FAILED
}
