package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A management request without the configured bearer token. Answered 401. Immutable and
 * thread-safe.
 */
public final class UnauthorizedException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public UnauthorizedException(String message) {
    super(message);
  }
}
