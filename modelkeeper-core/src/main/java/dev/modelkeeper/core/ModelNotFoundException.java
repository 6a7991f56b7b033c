package dev.modelkeeper.core;

/** The registry does not know the identifier. */
public class ModelNotFoundException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ModelNotFoundException(String message) {
    super(message);
  }

  public ModelNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
