package dev.modelkeeper.core;

/**
 * The root of ModelKeeper's unchecked exceptions; servers map its subtypes to responses by type.
 */
public class ModelKeeperException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ModelKeeperException(String message) {
    super(message);
  }

  public ModelKeeperException(String message, Throwable cause) {
    super(message, cause);
  }
}
