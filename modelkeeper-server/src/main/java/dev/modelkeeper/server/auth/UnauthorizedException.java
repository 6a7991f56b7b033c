package dev.modelkeeper.server.auth;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.ServerException;

/**
 * A management request without the configured bearer token. Answered 401. Immutable and
 * thread-safe.
 */
public final class UnauthorizedException extends ServerException {
  private static final long serialVersionUID = 1L;

  public UnauthorizedException(String message) {
    super(Failure.Kind.UNAUTHENTICATED, message);
  }
}
