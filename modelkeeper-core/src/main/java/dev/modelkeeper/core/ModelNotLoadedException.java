package dev.modelkeeper.core;

/** The model is not resident (get of an absent or loading model). */
public class ModelNotLoadedException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ModelNotLoadedException(String message) {
    super(message);
  }

  public ModelNotLoadedException(String message, Throwable cause) {
    super(message, cause);
  }
}
