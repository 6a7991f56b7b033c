package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A state-changing request from a web page whose {@code Origin} is not allowed. Answered 403.
 * Immutable and thread-safe.
 */
public final class ForbiddenException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ForbiddenException(String message) {
    super(message);
  }
}
