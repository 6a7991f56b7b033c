package dev.modelkeeper.server.http;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.ServerException;

/**
 * A body of a content type or content encoding the endpoint does not read. Answered 415. Immutable
 * and thread-safe.
 */
public final class UnsupportedMediaTypeException extends ServerException {
  private static final long serialVersionUID = 1L;

  public UnsupportedMediaTypeException(String message) {
    super(Failure.Kind.UNSUPPORTED_MEDIA_TYPE, message);
  }
}
