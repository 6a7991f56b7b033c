package dev.modelkeeper.server.errors;

/**
 * A request that contradicts the server's state, such as an alias already naming another model.
 * Answered 409. Immutable and thread-safe.
 */
public final class ConflictException extends ServerException {
  private static final long serialVersionUID = 1L;

  public ConflictException(String message) {
    super(Failure.Kind.CONFLICT, message);
  }
}
