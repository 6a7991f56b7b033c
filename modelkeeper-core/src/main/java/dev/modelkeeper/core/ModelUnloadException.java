package dev.modelkeeper.core;

/** A model's clearCache() threw; the model stays registered where it was. */
public class ModelUnloadException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ModelUnloadException(String message) {
    super(message);
  }

  public ModelUnloadException(String message, Throwable cause) {
    super(message, cause);
  }
}
