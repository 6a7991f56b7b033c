package dev.modelkeeper.onnx.remote;

/**
 * A downloaded artifact did not match its manifest (SHA-256 or length, e.g. a truncated body); the
 * partial file was deleted. Immutable and thread-safe.
 */
public class ArtifactIntegrityException extends ArtifactDownloadException {
  private static final long serialVersionUID = 1L;

  public ArtifactIntegrityException(String message) {
    super(message);
  }
}
