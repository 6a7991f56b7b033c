package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * The client sent its request too slowly: the body did not arrive within the body read timeout.
 * Answered 408. Immutable and thread-safe.
 */
public final class RequestTimeoutException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public RequestTimeoutException(String message) {
    super(message);
  }
}
