package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.PathRedaction;
import io.grpc.Status;

/**
 * The one place where failures become gRPC statuses: the code of the failure's {@link
 * Failure.Kind}, which is the code that corresponds to the HTTP status REST answers, with the same
 * message. No failure the server knows ends {@code UNKNOWN}. Stateless and thread-safe.
 */
public final class GrpcErrors {

  private GrpcErrors() {}

  /**
   * The status for {@code failure} of call {@code requestId}, the server's folders taken out of its
   * description by {@code redaction}.
   */
  static Status toStatus(Throwable failure, String requestId, PathRedaction redaction) {
    Failure f = Failure.of(failure, requestId).redacted(redaction);
    return code(f.kind()).withDescription(f.message());
  }

  /** The gRPC status of each kind of failure. */
  static Status code(Failure.Kind kind) {
    return switch (kind) {
      case BAD_REQUEST, UNSUPPORTED_MEDIA_TYPE -> Status.INVALID_ARGUMENT;
      case UNAUTHENTICATED -> Status.UNAUTHENTICATED;
      case FORBIDDEN -> Status.PERMISSION_DENIED;
      case NOT_FOUND -> Status.NOT_FOUND;
      case TIMEOUT -> Status.DEADLINE_EXCEEDED;
      case CONFLICT -> Status.ALREADY_EXISTS;
      case TOO_LARGE, INSUFFICIENT_STORAGE -> Status.RESOURCE_EXHAUSTED;
      case CANCELLED -> Status.CANCELLED;
      case INTERNAL -> Status.INTERNAL;
      case UNAVAILABLE -> Status.UNAVAILABLE;
      case UNSERVABLE -> Status.FAILED_PRECONDITION;
      case UNSUPPORTED -> Status.UNIMPLEMENTED;
    };
  }
}
