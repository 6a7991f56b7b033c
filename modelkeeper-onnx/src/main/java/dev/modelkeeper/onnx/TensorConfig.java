package dev.modelkeeper.onnx;

import java.util.List;
import java.util.Objects;

/**
 * One input or output as a model's configuration declares it. Immutable and thread-safe.
 *
 * @param name the tensor name the model uses
 * @param datatype its element type
 * @param dims its dimensions without the batch dimension of a batching model, -1 where any size
 * @param reshape the dimensions (again without the batch dimension) the model itself takes or
 *     gives, when they differ from {@code dims}; empty when they do not, or when the model takes a
 *     scalar per row ({@code reshape: { shape: [ ] }}, see {@code hasReshape})
 * @param optional whether a request may leave the input out (inputs only)
 * @param labels the class labels of an output whose values score classes (index i names class i);
 *     empty when none
 * @param hasReshape whether the configuration reshapes the tensor: true whenever {@code reshape} is
 *     not empty, and for a reshape to no dimensions at all
 */
public record TensorConfig(
    String name,
    Datatype datatype,
    List<Long> dims,
    List<Long> reshape,
    boolean optional,
    List<String> labels,
    boolean hasReshape) {

  public TensorConfig {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(datatype, "datatype");
    dims = List.copyOf(dims);
    reshape = reshape == null ? List.of() : List.copyOf(reshape);
    labels = labels == null ? List.of() : List.copyOf(labels);
    hasReshape |= !reshape.isEmpty();
  }

  /** A tensor reshaped when {@code reshape} is not empty. */
  public TensorConfig(
      String name,
      Datatype datatype,
      List<Long> dims,
      List<Long> reshape,
      boolean optional,
      List<String> labels) {
    this(name, datatype, dims, reshape, optional, labels, false);
  }

  /** The dimensions the model itself takes: {@code reshape} when given, else {@code dims}. */
  public List<Long> modelDims() {
    return hasReshape ? reshape : dims;
  }
}
