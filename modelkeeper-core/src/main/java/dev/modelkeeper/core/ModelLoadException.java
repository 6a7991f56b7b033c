package dev.modelkeeper.core;

/** A model could not be constructed; the cause is the factory's failure. */
public class ModelLoadException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ModelLoadException(String message) {
    super(message);
  }

  public ModelLoadException(String message, Throwable cause) {
    super(message, cause);
  }
}
