package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A request the server cannot read: malformed JSON, a missing or mistyped field. Answered 400.
 * Immutable and thread-safe.
 */
final class BadRequestException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  BadRequestException(String message) {
    super(message);
  }

  BadRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
