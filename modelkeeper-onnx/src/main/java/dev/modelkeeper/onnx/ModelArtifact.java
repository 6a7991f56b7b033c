package dev.modelkeeper.onnx;

import java.nio.file.Path;

/**
 * A model version whose files are on local disk, ready to load. Immutable and thread-safe.
 *
 * @param name the model name
 * @param version the concrete version
 * @param modelFile the verified local {@code model.onnx}
 * @param config the version's config, {@link ModelConfig#EMPTY} when it has none
 */
public record ModelArtifact(String name, String version, Path modelFile, ModelConfig config) {

  public String id() {
    return name + "/" + version;
  }
}
