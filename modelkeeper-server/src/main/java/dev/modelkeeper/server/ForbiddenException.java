package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A state-changing request from a web page whose {@code Origin} is not allowed. Answered 403.
 * Immutable and thread-safe.
 */
final class ForbiddenException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  ForbiddenException(String message) {
    super(message);
  }
}
