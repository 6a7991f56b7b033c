package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A request body, or the tensors it declares, is larger than the server accepts. Answered 413.
 * Immutable and thread-safe.
 */
public final class PayloadTooLargeException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public PayloadTooLargeException(String message) {
    super(message);
  }
}
