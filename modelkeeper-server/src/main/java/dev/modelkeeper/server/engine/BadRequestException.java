package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A request the server cannot read: malformed JSON, a missing or mistyped field. Answered 400.
 * Immutable and thread-safe.
 */
public final class BadRequestException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public BadRequestException(String message) {
    super(message);
  }

  public BadRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
