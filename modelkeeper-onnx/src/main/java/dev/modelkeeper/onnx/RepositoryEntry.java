package dev.modelkeeper.onnx;

/**
 * One model version a repository holds, as its index lists it. Immutable and thread-safe.
 *
 * @param name the model name
 * @param version the concrete version
 * @param description the config's description, empty when none
 * @param sizeBytes the predicted resident size (the config's expected size, else the model file's
 *     size), or -1 when unknown
 */
public record RepositoryEntry(String name, String version, String description, long sizeBytes) {

  /** The {@code name/version} identifier. */
  public String id() {
    return name + "/" + version;
  }

  public ModelId modelId() {
    return new ModelId(name, version);
  }
}
