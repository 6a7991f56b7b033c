package dev.modelkeeper.onnx;

import java.util.Arrays;
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

  /**
   * Checks that input {@code t} of model {@code modelId} has this datatype.
   *
   * @throws InvalidInputException naming the input, the model and both datatypes when not
   */
  public void checkDatatype(String modelId, Tensor t) {
    if (t.datatype() != datatype) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' of model '"
              + modelId
              + "' must be "
              + datatype
              + ", was "
              + t.datatype());
    }
  }

  /**
   * Checks that an input of model {@code modelId} with {@code shape} fits this shape: the same
   * rank, and each dimension equal where this one is not -1.
   *
   * @throws InvalidInputException naming the input, the model and both shapes when not
   */
  public void checkShape(String modelId, long[] shape) {
    boolean ok = this.shape.size() == shape.length;
    for (int i = 0; ok && i < shape.length; i++) {
      long w = this.shape.get(i);
      ok = w < 0 || w == shape[i];
    }
    if (!ok) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' of model '"
              + modelId
              + "' has shape "
              + Arrays.toString(shape)
              + ", the model takes "
              + this.shape
              + " (-1 = any size)");
    }
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
