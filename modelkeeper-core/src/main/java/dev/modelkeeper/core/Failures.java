package dev.modelkeeper.core;

/** Turns what user code threw into what the manager throws. Stateless. */
final class Failures {

  private Failures() {}

  /**
   * Rethrows errors, passes unchecked exceptions through as they are and wraps a checked one once
   * in {@link ModelLoadException}; restores the interrupt flag when the cause was an interrupt.
   */
  static RuntimeException toUnchecked(Throwable t, String message) {
    if (t instanceof Error) {
      throw (Error) t;
    }
    if (t instanceof RuntimeException) {
      return (RuntimeException) t;
    }
    if (t instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return new ModelLoadException(message + ": " + t, t);
  }

  /** Failures that say nothing about the model's storage and so open no back-off window. */
  static boolean isTransient(Throwable t) {
    return t instanceof ModelNotFoundException
        || t instanceof CapacityExceededException
        || t instanceof LockTimeoutException
        || t instanceof LifecycleInterruptedException;
  }
}
