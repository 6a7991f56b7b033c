package dev.modelkeeper.server.errors;

/**
 * A request the server cannot read: malformed JSON, a missing or mistyped field. Answered 400.
 * Immutable and thread-safe.
 */
public final class BadRequestException extends ServerException {
  private static final long serialVersionUID = 1L;

  public BadRequestException(String message) {
    super(Failure.Kind.BAD_REQUEST, message);
  }

  public BadRequestException(String message, Throwable cause) {
    super(Failure.Kind.BAD_REQUEST, message, null, cause);
  }
}
