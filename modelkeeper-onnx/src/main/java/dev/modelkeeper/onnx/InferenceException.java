package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * The runtime failed while running a model on inputs that passed validation (a bug or a broken
 * model, not a bad request); servers answer it with HTTP 500. Immutable and thread-safe.
 */
public class InferenceException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public InferenceException(String message, Throwable cause) {
    super(message, cause);
  }
}
