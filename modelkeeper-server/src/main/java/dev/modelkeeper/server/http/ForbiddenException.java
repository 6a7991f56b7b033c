package dev.modelkeeper.server.http;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.ServerException;

/**
 * A state-changing request from a web page whose {@code Origin} is not allowed. Answered 403.
 * Immutable and thread-safe.
 */
public final class ForbiddenException extends ServerException {
  private static final long serialVersionUID = 1L;

  public ForbiddenException(String message) {
    super(Failure.Kind.FORBIDDEN, message);
  }
}
