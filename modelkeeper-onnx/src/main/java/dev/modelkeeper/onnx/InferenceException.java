package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * The runtime failed while running a model for a reason of its own (out of memory, an engine
 * error), not because of the inputs; servers answer it with HTTP 500. A kernel that refuses the
 * inputs it was given is {@link InvalidInputException} instead. Immutable and thread-safe.
 */
public class InferenceException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public InferenceException(String message, Throwable cause) {
    super(message, cause);
  }
}
