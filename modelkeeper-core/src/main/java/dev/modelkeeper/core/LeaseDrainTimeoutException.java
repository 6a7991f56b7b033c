package dev.modelkeeper.core;

/**
 * A removal waited for open leases to close and ran out of time; the model stays registered and
 * leasable.
 */
public class LeaseDrainTimeoutException extends LockTimeoutException {
  private static final long serialVersionUID = 1L;

  public LeaseDrainTimeoutException(String message) {
    super(message);
  }
}
