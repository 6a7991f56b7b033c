package dev.modelkeeper.core;

import java.time.Duration;

/**
 * A recent load of this model failed and its back-off window is still open; the cause is the
 * recorded failure. No constructor ran for this call.
 */
public class LoadBackoffException extends ModelLoadException {
  private static final long serialVersionUID = 1L;

  private final Duration retryAfter;

  public LoadBackoffException(String message, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.retryAfter = retryAfter;
  }

  /** How long until a new attempt is allowed. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
