package dev.modelkeeper.onnx;

import java.util.Set;

/** ONNX Runtime as a {@link ModelBackend}: {@link OnnxModel}s. Stateless and thread-safe. */
public final class OnnxBackend implements ModelBackend {

  /** Its name in {@code config.pbtxt}. */
  public static final String NAME = TritonConfig.BACKEND;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> platforms() {
    return Set.of(TritonConfig.PLATFORM);
  }

  @Override
  public String defaultModelFileName() {
    return ModelRepository.MODEL_FILE;
  }

  @Override
  public InferenceModel load(ModelArtifact artifact, OnnxModelOptions options) {
    return OnnxModel.load(artifact, options);
  }
}
