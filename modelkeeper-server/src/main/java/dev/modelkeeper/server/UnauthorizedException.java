package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A management request without the configured bearer token. Answered 401. Immutable and
 * thread-safe.
 */
final class UnauthorizedException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  UnauthorizedException(String message) {
    super(message);
  }
}
