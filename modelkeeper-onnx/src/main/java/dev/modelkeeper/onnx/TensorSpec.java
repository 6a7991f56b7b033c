package dev.modelkeeper.onnx;

import java.util.List;
import java.util.Objects;

/**
 * The declared name, datatype and shape of one model input or output; {@code -1} marks a dynamic
 * dimension (e.g. the batch). Immutable and thread-safe.
 *
 * @param name the tensor name the model uses
 * @param datatype its element type
 * @param shape its dimensions, -1 where dynamic; an unmodifiable list
 */
public record TensorSpec(String name, Datatype datatype, List<Long> shape) {

  public TensorSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(datatype, "datatype");
    shape = List.copyOf(shape);
  }

  /** A spec from a primitive shape array. */
  public static TensorSpec of(String name, Datatype datatype, long... shape) {
    Long[] boxed = new Long[shape.length];
    for (int i = 0; i < shape.length; i++) {
      boxed[i] = shape[i];
    }
    return new TensorSpec(name, datatype, List.of(boxed));
  }

  /** The shape as a new primitive array. */
  public long[] shapeArray() {
    long[] out = new long[shape.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = shape.get(i);
    }
    return out;
  }
}
