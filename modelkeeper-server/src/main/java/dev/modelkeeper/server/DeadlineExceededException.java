package dev.modelkeeper.server;

/** A call's deadline passed before it was answered; 408, or DEADLINE_EXCEEDED over gRPC. */
final class DeadlineExceededException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  DeadlineExceededException(String message) {
    super(message);
  }
}
