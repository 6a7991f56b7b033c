package dev.modelkeeper.server.http;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.ServerException;

/**
 * The client sent its request too slowly: the body did not arrive within the body read timeout.
 * Answered 408. Immutable and thread-safe.
 */
public final class RequestTimeoutException extends ServerException {
  private static final long serialVersionUID = 1L;

  public RequestTimeoutException(String message) {
    super(Failure.Kind.TIMEOUT, message);
  }
}
