package dev.modelkeeper.core;

/** The calling thread was interrupted while waiting; its interrupt flag is set again. */
public class LifecycleInterruptedException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public LifecycleInterruptedException(String message) {
    super(message);
  }

  public LifecycleInterruptedException(String message, Throwable cause) {
    super(message, cause);
  }
}
