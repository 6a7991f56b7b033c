package dev.modelkeeper.onnx;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the Open Inference Protocol model metadata endpoint reports about one loaded model, plus the
 * repository's description and class labels. Immutable and thread-safe.
 *
 * @param name the model name (without version)
 * @param version the concrete version that is loaded, e.g. {@code "1"}
 * @param platform {@code "onnx_onnxv1"} for ONNX models
 * @param inputs the declared inputs, in model order
 * @param outputs the declared outputs, in model order
 * @param description a human-readable description, empty when none
 * @param labels class labels of a classifier (index i names class i), empty when none
 */
public record ModelMetadata(
    String name,
    String version,
    String platform,
    List<TensorSpec> inputs,
    List<TensorSpec> outputs,
    String description,
    List<String> labels) {

  /** The platform name ONNX models report. */
  public static final String ONNX_PLATFORM = "onnx_onnxv1";

  public ModelMetadata {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(platform, "platform");
    inputs = List.copyOf(inputs);
    outputs = List.copyOf(outputs);
    description = description == null ? "" : description;
    labels = labels == null ? List.of() : List.copyOf(labels);
  }

  /** The {@code name/version} identifier of the loaded model. */
  public String id() {
    return name + "/" + version;
  }

  public Optional<TensorSpec> input(String inputName) {
    return inputs.stream().filter(s -> s.name().equals(inputName)).findFirst();
  }

  public Optional<TensorSpec> output(String outputName) {
    return outputs.stream().filter(s -> s.name().equals(outputName)).findFirst();
  }
}
