package dev.modelkeeper.onnx;

/**
 * A model configuration asks for something ModelKeeper does not serve (an ensemble, another
 * backend, sequence batching, a decoupled model): the configuration is well formed, and the model
 * is listed but refused the same way every time. Immutable and thread-safe.
 */
public class UnsupportedFeatureException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public UnsupportedFeatureException(String message) {
    super(message);
  }
}
