package dev.modelkeeper.server.errors;

/**
 * A readiness probe's "no": the server is starting or stopping, or a model is not resident. The
 * Open Inference Protocol answers false with a 4xx status, so this is answered 400. Immutable and
 * thread-safe.
 */
public final class NotReadyException extends ServerException {
  private static final long serialVersionUID = 1L;

  public NotReadyException(String message) {
    super(Failure.Kind.BAD_REQUEST, message);
  }
}
