package dev.modelkeeper.server.errors;

import java.time.Duration;

/**
 * The server cannot take the request now (it timed out, every worker is busy, or the server is
 * stopping) and the client may retry after {@link #retryAfter()}. Answered 503 with {@code
 * Retry-After}. Immutable and thread-safe.
 */
public final class UnavailableException extends ServerException {
  private static final long serialVersionUID = 1L;

  public UnavailableException(String message, Duration retryAfter) {
    super(Failure.Kind.UNAVAILABLE, message, retryAfter, null);
  }
}
