package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;
import java.time.Duration;

/**
 * The server cannot take the request now (it timed out, every worker is busy, or the server is
 * stopping) and the client may retry after {@link #retryAfter()}. Answered 503 with {@code
 * Retry-After}. Immutable and thread-safe.
 */
public final class UnavailableException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  private final Duration retryAfter;

  public UnavailableException(String message, Duration retryAfter) {
    super(message);
    this.retryAfter = retryAfter;
  }

  Duration retryAfter() {
    return retryAfter;
  }
}
