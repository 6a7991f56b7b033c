package dev.modelkeeper.server.errors;

/**
 * A request the server's settings do not allow, whoever sends it; the message names the setting.
 * Answered 403 (gRPC PERMISSION_DENIED). Immutable and thread-safe.
 */
public final class PermissionDeniedException extends ServerException {
  private static final long serialVersionUID = 1L;

  public PermissionDeniedException(String message) {
    super(Failure.Kind.FORBIDDEN, message);
  }
}
