package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * A body of a content type or content encoding the endpoint does not read. Answered 415. Immutable
 * and thread-safe.
 */
final class UnsupportedMediaTypeException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  UnsupportedMediaTypeException(String message) {
    super(message);
  }
}
