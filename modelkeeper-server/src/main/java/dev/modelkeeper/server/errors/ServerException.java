package dev.modelkeeper.server.errors;

import dev.modelkeeper.core.ModelKeeperException;
import java.time.Duration;

/**
 * A failure the server itself raises, which states its {@link Failure.Kind} (and, for {@link
 * Failure.Kind#UNAVAILABLE}, when to retry): transports answer it by that kind alone. Immutable and
 * thread-safe.
 */
public abstract class ServerException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  private final Failure.Kind kind;
  private final Duration retryAfter;

  protected ServerException(Failure.Kind kind, String message) {
    this(kind, message, null, null);
  }

  protected ServerException(
      Failure.Kind kind, String message, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.retryAfter = retryAfter;
  }

  /** What kind of failure this is. */
  public Failure.Kind kind() {
    return kind;
  }

  /** When a client may retry, for {@link Failure.Kind#UNAVAILABLE}; else null. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
