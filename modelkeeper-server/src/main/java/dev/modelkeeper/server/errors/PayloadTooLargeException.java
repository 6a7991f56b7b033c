package dev.modelkeeper.server.errors;

/**
 * A request body, or the tensors it declares, is larger than the server accepts. Answered 413.
 * Immutable and thread-safe.
 */
public final class PayloadTooLargeException extends ServerException {
  private static final long serialVersionUID = 1L;

  public PayloadTooLargeException(String message) {
    super(Failure.Kind.TOO_LARGE, message);
  }
}
