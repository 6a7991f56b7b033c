package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A request's tensors do not fit the model: unknown or missing input, wrong datatype, a shape that
 * disagrees with the data or with the model, an unknown requested output. Servers answer it with
 * HTTP 400. Immutable and thread-safe.
 */
public class InvalidInputException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public InvalidInputException(String message) {
    super(message);
  }

  public InvalidInputException(String message, Throwable cause) {
    super(message, cause);
  }
}
