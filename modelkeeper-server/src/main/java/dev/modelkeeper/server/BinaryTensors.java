package dev.modelkeeper.server;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Tensors in the binary layout that the binary tensor data extension (REST) and gRPC raw contents
 * share: little-endian elements back to back, BOOL one byte each, BYTES elements each after a
 * 4-byte little-endian length ({@link Datatype} owns the layout). Stateless and thread-safe.
 */
final class BinaryTensors {

  private BinaryTensors() {}

  /**
   * Reads input {@code name} from the next {@code size} bytes of {@code binary}, advancing it.
   *
   * @throws InvalidInputException when {@code size} runs past the end of {@code binary}, or the
   *     bytes do not hold exactly the elements the shape declares
   */
  static Tensor read(String name, Datatype datatype, long[] shape, ByteBuffer binary, long size) {
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
  static Tensor read(String name, Datatype datatype, long[] shape, ByteBuffer bytes) {
    int count = (int) InferRequestDecoder.elementCount(name, shape);
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
