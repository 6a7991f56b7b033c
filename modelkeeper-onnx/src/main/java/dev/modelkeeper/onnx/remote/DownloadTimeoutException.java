package dev.modelkeeper.onnx.remote;

/**
 * A download did not finish within the cache's download timeout; the partial file was deleted.
 * Immutable and thread-safe.
 */
public class DownloadTimeoutException extends ArtifactDownloadException {
  private static final long serialVersionUID = 1L;

  public DownloadTimeoutException(String message) {
    super(message);
  }
}
