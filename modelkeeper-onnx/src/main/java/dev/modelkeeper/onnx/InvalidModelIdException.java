package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A model identifier is malformed or tries to leave the repository root (path traversal, absolute
 * paths, encoded separators). Servers answer it with HTTP 400. Immutable and thread-safe.
 */
public class InvalidModelIdException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public InvalidModelIdException(String message) {
    super(message);
  }
}
