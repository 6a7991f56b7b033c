package dev.modelkeeper.server.request;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.BadRequestException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The rules every transport's input tensors follow, and tensors in the binary layout that the
 * binary tensor data extension (REST) and gRPC raw contents share: little-endian elements back to
 * back, BOOL one byte each, BYTES elements each after a 4-byte little-endian length ({@link
 * Datatype} owns the layout). Stateless and thread-safe.
 */
public final class TensorInputs {

  /** More dimensions than any model here takes; a bound on work done for hostile shapes. */
  public static final int MAX_RANK = 32;

  /**
   * The output parameter of Triton's classification extension: the output is answered as its top
   * classes, {@code "score:index:label"} strings (see {@link Classification}).
   */
  public static final String CLASSIFICATION = "classification";

  /** Heap bytes a decoded BYTES element costs beyond its characters (reference and header). */
  public static final int STRING_OVERHEAD_BYTES = 48;

  private TensorInputs() {}

  /** The top-class count an output asks for, checked: from 1 to Integer.MAX_VALUE. */
  public static int classCount(long k, String where) {
    if (k < 1 || k > Integer.MAX_VALUE) {
      throw new BadRequestException(
          where
              + " 'classification' must be a whole number of classes from 1 to "
              + Integer.MAX_VALUE
              + ", was "
              + k);
    }
    return (int) k;
  }

  /**
   * The number of elements of input {@code name}'s {@code shape}.
   *
   * @throws InvalidInputException when that is more than an array can hold
   */
  public static long elementCount(String name, long[] shape) {
    long n = 1;
    for (long d : shape) {
      if (d != 0 && n > (Integer.MAX_VALUE - 8) / d) {
        throw new InvalidInputException(
            "input '" + name + "' shape " + Arrays.toString(shape) + " is too large");
      }
      n *= d;
    }
    return n;
  }

  /**
   * Reads input {@code name} from the next {@code size} bytes of {@code binary}, advancing it.
   *
   * @throws InvalidInputException when {@code size} runs past the end of {@code binary}, or the
   *     bytes do not hold exactly the elements the shape declares
   */
  public static Tensor read(
      String name, Datatype datatype, long[] shape, ByteBuffer binary, long size) {
    if (size > binary.remaining()) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' claims "
              + size
              + " bytes of binary data but only "
              + binary.remaining()
              + " remain in the request body");
    }
    ByteBuffer slice = binary.slice(binary.position(), (int) size).order(ByteOrder.LITTLE_ENDIAN);
    binary.position(binary.position() + (int) size);
    return read(name, datatype, shape, slice);
  }

  /**
   * Reads input {@code name} from all of {@code bytes} (little-endian).
   *
   * @throws InvalidInputException when the bytes do not hold exactly the elements the shape
   *     declares
   */
  public static Tensor read(String name, Datatype datatype, long[] shape, ByteBuffer bytes) {
    int count = (int) elementCount(name, shape);
    int size = bytes.remaining();
    if (datatype.elementBytes() > 0 && (long) count * datatype.elementBytes() != size) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' has shape "
              + Arrays.toString(shape)
              + " ("
              + count
              + " "
              + datatype
              + " elements, "
              + (long) count * datatype.elementBytes()
              + " bytes) but "
              + size
              + " bytes of binary data");
    }
    if (bytes.isDirect() && datatype.elementBytes() > 0) {
      return Tensor.ofBinary(name, datatype, shape, bytes); // read in place, not decoded
    }
    Object data = datatype.fromBinary(name, bytes, count);
    if (bytes.hasRemaining()) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' has "
              + bytes.remaining()
              + " bytes of binary data after its "
              + count
              + " BYTES elements");
    }
    return Tensor.of(name, datatype, shape, data);
  }
}
