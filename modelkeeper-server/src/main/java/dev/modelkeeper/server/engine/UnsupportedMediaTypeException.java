package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A body of a content type or content encoding the endpoint does not read. Answered 415. Immutable
 * and thread-safe.
 */
public final class UnsupportedMediaTypeException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public UnsupportedMediaTypeException(String message) {
    super(message);
  }
}
