package dev.modelkeeper.onnx;

import java.util.List;

/**
 * The optional per-version {@code config.json} of a repository model. Immutable and thread-safe.
 *
 * <p>Format (every key optional, unknown keys ignored; at most 64 KiB):
 *
 * <pre>{@code
 * {
 *   "description": "Iris species classifier (multinomial logistic regression)",
 *   "labels": ["setosa", "versicolor", "virginica"],
 *   "expected_size_bytes": 1234
 * }
 * }</pre>
 *
 * @param description a human-readable description, empty when none
 * @param labels class labels (index i names class i), empty when none
 * @param expectedSizeBytes the resident size to reserve before loading, or -1 when not given
 */
public record ModelConfig(String description, List<String> labels, long expectedSizeBytes) {

  /** The file name of a version's config inside its folder. */
  public static final String FILE_NAME = "config.json";

  /** A config with nothing in it. */
  public static final ModelConfig EMPTY = new ModelConfig("", List.of(), -1);

  public ModelConfig {
    description = description == null ? "" : description;
    labels = labels == null ? List.of() : List.copyOf(labels);
  }

  /**
   * Parses the JSON text of a config file.
   *
   * @throws IllegalArgumentException when the text is not valid JSON or a key has the wrong type
   */
  public static ModelConfig parse(String json) {
    return ModelConfigJson.parse(json);
  }

  /** This config as JSON text that {@link #parse} reads back. */
  public String toJson() {
    return ModelConfigJson.write(this);
  }
}
