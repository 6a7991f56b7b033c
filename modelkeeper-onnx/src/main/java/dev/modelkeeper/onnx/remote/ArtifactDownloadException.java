package dev.modelkeeper.onnx.remote;

import dev.modelkeeper.core.ModelKeeperException;

/**
 * An artifact could not be fetched from a remote repository (connection failure, HTTP error, bad
 * manifest); nothing was left in the cache. Servers answer it with HTTP 503 (the upstream store is
 * unavailable). Immutable and thread-safe.
 */
public class ArtifactDownloadException extends ModelKeeperException {
  private static final long serialVersionUID = 1L;

  public ArtifactDownloadException(String message) {
    super(message);
  }

  public ArtifactDownloadException(String message, Throwable cause) {
    super(message, cause);
  }
}
