package dev.modelkeeper.core;

/** A wait for the lifecycle of one model ran out; the caller left no trace. */
public class LockTimeoutException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public LockTimeoutException(String message) {
    super(message);
  }

  public LockTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
