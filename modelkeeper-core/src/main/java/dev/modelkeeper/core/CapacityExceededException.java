package dev.modelkeeper.core;

/**
 * The budget could not make room before the deadline without tearing down leased or pinned models.
 */
public class CapacityExceededException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public CapacityExceededException(String message) {
    super(message);
  }

  public CapacityExceededException(String message, Throwable cause) {
    super(message, cause);
  }
}
