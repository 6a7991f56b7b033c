package dev.modelkeeper.onnx;

import dev.modelkeeper.onnx.memory.MemoryCost;
import java.util.Set;

/**
 * A runtime that serves models: ONNX Runtime, Triton's Python backend. Backends are found with
 * {@link java.util.ServiceLoader} (a {@code META-INF/services/dev.modelkeeper.onnx.ModelBackend}
 * file in the backend's jar), and a model's {@code config.pbtxt} chooses one by its {@code backend}
 * or {@code platform}; a model without a {@code config.pbtxt} is an ONNX model. So a second runtime
 * plugs in without a change to the server or the repositories. Implementations are thread-safe.
 */
public interface ModelBackend {

  /**
   * The name {@code config.pbtxt}'s {@code backend} gives it: {@code onnxruntime}, {@code python}.
   */
  String name();

  /**
   * The {@code platform} values of {@code config.pbtxt} it serves, e.g. {@code onnxruntime_onnx}.
   */
  default Set<String> platforms() {
    return Set.of();
  }

  /** The model file in each version folder when {@code config.pbtxt} names none. */
  String defaultModelFileName();

  /**
   * Loads one version of a model: its file, in its version folder, with its configuration.
   *
   * @throws dev.modelkeeper.core.ModelLoadException when it cannot; a {@link
   *     dev.modelkeeper.core.ModelUnservableException} when the reason is in the model's files (the
   *     same files fail the same way)
   */
  InferenceModel load(ModelArtifact artifact, OnnxModelOptions options);

  /**
   * As {@link #load(ModelArtifact, OnnxModelOptions)}, for a model that may call other models
   * through {@code caller}; backends whose models call none ignore it.
   */
  default InferenceModel load(
      ModelArtifact artifact, OnnxModelOptions options, ModelCaller caller) {
    return load(artifact, options);
  }

  /**
   * What loading a model of {@code fileBytes} (its model file) is expected to need at its peak
   * before it was ever measured; conservative.
   */
  default long estimatedPeakBytes(long fileBytes) {
    return MemoryCost.estimate(fileBytes).loadPeakBytes();
  }
}
