package dev.modelkeeper.onnx;

import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A named tensor: an Open Inference Protocol {@link Datatype}, a shape and its elements in
 * row-major order, held either as one flat typed array or, for tensors that arrive in the binary
 * layout (the binary tensor data extension, gRPC raw contents), as those bytes themselves ({@link
 * #ofBinary}): a tensor over a direct buffer goes to ONNX Runtime without a copy. Immutable by
 * convention and therefore thread-safe: the factories take ownership of the array or bytes (they do
 * not copy them) and {@link #data()} hands out that same array, so neither the caller nor a reader
 * may modify it.
 *
 * <p>Every factory checks that the array type matches the datatype and that the shape's element
 * count equals the data length, and throws {@link InvalidInputException} otherwise. For JSON front
 * ends, {@link #fromValues} converts (possibly nested) lists of numbers, booleans or strings and
 * {@link #toList()} returns JSON-friendly boxed values (use it instead of serializing {@code
 * byte[]} data, which JSON libraries tend to write as base64).
 */
public final class Tensor {

  private final String name;
  private final Datatype datatype;
  private final long[] shape;
  private final int count;

  /** The elements in binary layout (little-endian, position 0), or null for an array tensor. */
  private final ByteBuffer binary;

  /** The elements as an array; for a binary tensor, decoded on first use (a race decodes twice). */
  private volatile Object data;

  private Tensor(String name, Datatype datatype, long[] shape, int count, ByteBuffer binary) {
    this.name = name;
    this.datatype = datatype;
    this.shape = shape;
    this.count = count;
    this.binary = binary;
  }

  private Tensor(String name, Datatype datatype, long[] shape, Object data) {
    this(name, datatype, shape, Array.getLength(data), null);
    this.data = data;
  }

  /**
   * A tensor over {@code data}, which must be an array of {@link Datatype#arrayType()}.
   *
   * @throws InvalidInputException when the name is empty, a dimension is negative, the array type
   *     does not match the datatype or the shape's element count differs from the data length
   */
  public static Tensor of(String name, Datatype datatype, long[] shape, Object data) {
    if (name == null || name.isEmpty()) {
      throw new InvalidInputException("tensor name is missing");
    }
    if (datatype == null) {
      throw new InvalidInputException("tensor '" + name + "' has no datatype");
    }
    if (shape == null) {
      throw new InvalidInputException("tensor '" + name + "' has no shape");
    }
    if (data == null) {
      throw new InvalidInputException("tensor '" + name + "' has no data");
    }
    if (data.getClass() != datatype.arrayType()) {
      throw new InvalidInputException(
          "tensor '"
              + name
              + "' is declared "
              + datatype
              + " but its data is "
              + data.getClass().getSimpleName());
    }
    long[] dims = shape.clone();
    long count = elementCount(name, dims);
    int length = Array.getLength(data);
    if (count != length) {
      throw shapeMismatch(name, dims, count + " elements", length + " data elements");
    }
    if (datatype == Datatype.BYTES) {
      for (byte[] b : (byte[][]) data) {
        if (b == null) {
          throw new InvalidInputException("tensor '" + name + "' has a null BYTES element");
        }
      }
    }
    return new Tensor(name, datatype, dims, data);
  }

  /**
   * A tensor over the bytes of {@code data} from its position to its limit, in the binary layout of
   * {@link Datatype} (elements back to back, little-endian; BOOL one byte each), without copying
   * them: the tensor shares those bytes, so they must not change while it is in use. When {@code
   * data} is a direct buffer, ONNX Runtime reads the elements in place; {@link #data()} decodes
   * them into an array on first use.
   *
   * @throws InvalidInputException as {@link #of}, or when {@code datatype} is BYTES (its elements
   *     have no fixed size) or the byte count is not the shape's element count times the element
   *     size
   */
  public static Tensor ofBinary(String name, Datatype datatype, long[] shape, ByteBuffer data) {
    if (name == null || name.isEmpty()) {
      throw new InvalidInputException("tensor name is missing");
    }
    if (datatype == null || shape == null || data == null) {
      throw new InvalidInputException("tensor '" + name + "' has no datatype, shape or data");
    }
    if (datatype.elementBytes() <= 0) {
      throw new InvalidInputException(
          "tensor '" + name + "' is " + datatype + ", which has no fixed-size binary form");
    }
    long[] dims = shape.clone();
    long n = elementCount(name, dims);
    if (n * datatype.elementBytes() != data.remaining()) {
      throw shapeMismatch(
          name,
          dims,
          n + " " + datatype + " elements, " + n * datatype.elementBytes() + " bytes",
          data.remaining() + " bytes of data");
    }
    return new Tensor(name, datatype, dims, (int) n, data.slice().order(ByteOrder.LITTLE_ENDIAN));
  }

  /** "tensor 'name' has shape [dims] (holds) but has". */
  private static InvalidInputException shapeMismatch(
      String name, long[] dims, String holds, String has) {
    return new InvalidInputException(
        "tensor '" + name + "' has shape " + Arrays.toString(dims) + " (" + holds + ") but " + has);
  }

  public static Tensor ofFloats(String name, long[] shape, float... data) {
    return of(name, Datatype.FP32, shape, data);
  }

  public static Tensor ofDoubles(String name, long[] shape, double... data) {
    return of(name, Datatype.FP64, shape, data);
  }

  public static Tensor ofInts(String name, long[] shape, int... data) {
    return of(name, Datatype.INT32, shape, data);
  }

  public static Tensor ofLongs(String name, long[] shape, long... data) {
    return of(name, Datatype.INT64, shape, data);
  }

  public static Tensor ofShorts(String name, long[] shape, short... data) {
    return of(name, Datatype.INT16, shape, data);
  }

  /** An INT8 tensor. */
  public static Tensor ofInt8(String name, long[] shape, byte... data) {
    return of(name, Datatype.INT8, shape, data);
  }

  /** A UINT8 tensor; each byte is read as unsigned (e.g. {@code (byte) 200} is 200). */
  public static Tensor ofUint8(String name, long[] shape, byte... data) {
    return of(name, Datatype.UINT8, shape, data);
  }

  public static Tensor ofBooleans(String name, long[] shape, boolean... data) {
    return of(name, Datatype.BOOL, shape, data);
  }

  /** A BYTES tensor of {@code data}, each element its UTF-8 bytes. */
  public static Tensor ofStrings(String name, long[] shape, String... data) {
    byte[][] bytes = new byte[data.length][];
    for (int i = 0; i < data.length; i++) {
      if (data[i] == null) {
        throw new InvalidInputException("tensor '" + name + "' has a null BYTES element");
      }
      bytes[i] = Datatype.utf8Encodable(name, i, data[i]).getBytes(StandardCharsets.UTF_8);
    }
    return of(name, Datatype.BYTES, shape, bytes);
  }

  /** A BYTES tensor of {@code data}, each element any bytes. */
  public static Tensor ofByteStrings(String name, long[] shape, byte[]... data) {
    return of(name, Datatype.BYTES, shape, data);
  }

  /**
   * Builds a tensor from loosely typed values as a JSON parser produces them: a {@link List} or
   * array, possibly nested, of {@link Number}s (integral for integer types, within range), {@link
   * Boolean}s (BOOL) or {@link String}s (BYTES; a {@code byte[]} is decoded as UTF-8). Nested lists
   * are flattened in row-major order; only the total count is checked against the shape.
   *
   * @throws InvalidInputException when an element has the wrong kind or is out of range, or the
   *     count disagrees with the shape
   */
  public static Tensor fromValues(String name, Datatype datatype, long[] shape, Object values) {
    if (datatype == null) {
      throw new InvalidInputException("tensor '" + name + "' has no datatype");
    }
    if (values == null) {
      throw new InvalidInputException("tensor '" + name + "' has no data");
    }
    if (values.getClass() == datatype.arrayType()) {
      return of(name, datatype, shape, values);
    }
    List<Object> flat = new ArrayList<>();
    flatten(name, values, flat, 0);
    int n = flat.size();
    Object data = Array.newInstance(datatype.arrayType().getComponentType(), n);
    for (int i = 0; i < n; i++) {
      datatype.set(name, data, i, flat.get(i));
    }
    return of(name, datatype, shape, data);
  }

  public String name() {
    return name;
  }

  public Datatype datatype() {
    return datatype;
  }

  /** A copy of the shape. */
  public long[] shape() {
    return shape.clone();
  }

  public int rank() {
    return shape.length;
  }

  /** The number of elements (the product of the shape; 1 for a scalar). */
  public int elementCount() {
    return count;
  }

  /**
   * The flat data array itself (not a copy): an array of {@link Datatype#arrayType()}; a tensor
   * made by {@link #ofBinary} decodes it once, on the first call.
   */
  public Object data() {
    Object d = data;
    if (d == null) {
      d = datatype.decode(binary.duplicate().order(ByteOrder.LITTLE_ENDIAN), count);
      data = d;
    }
    return d;
  }

  /**
   * The elements in binary layout, read-only and little-endian, when this tensor was made from them
   * by {@link #ofBinary} (sharing its bytes); else null.
   */
  public ByteBuffer binary() {
    return binary == null ? null : binary.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  public float[] floats() {
    return typed(Datatype.FP32, float[].class);
  }

  public double[] doubles() {
    return typed(Datatype.FP64, double[].class);
  }

  public int[] ints() {
    return typed(Datatype.INT32, int[].class);
  }

  public long[] longs() {
    return typed(Datatype.INT64, long[].class);
  }

  public short[] shorts() {
    return typed(Datatype.INT16, short[].class);
  }

  /** The data of an INT8 or UINT8 tensor. */
  public byte[] bytes() {
    if (datatype != Datatype.INT8 && datatype != Datatype.UINT8) {
      throw new IllegalStateException("tensor '" + name + "' is " + datatype + ", not INT8/UINT8");
    }
    return (byte[]) data();
  }

  public boolean[] booleans() {
    return typed(Datatype.BOOL, boolean[].class);
  }

  /** The elements of a BYTES tensor, each its bytes. */
  public byte[][] byteStrings() {
    return typed(Datatype.BYTES, byte[][].class);
  }

  /**
   * The elements of a BYTES tensor as text, each decoded from UTF-8 (bytes that are not UTF-8 are
   * replaced with U+FFFD: use {@link #byteStrings()} where bytes matter).
   */
  public String[] strings() {
    byte[][] bytes = byteStrings();
    String[] out = new String[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      out[i] = new String(bytes[i], StandardCharsets.UTF_8);
    }
    return out;
  }

  /**
   * Element {@code index} boxed as JSON would carry it: {@link Boolean}, {@link Integer} (INT8,
   * INT16, INT32, UINT8 as 0..255, UINT16), {@link Long} (INT64, UINT32, UINT64 up to 2^63-1),
   * {@link java.math.BigInteger} (UINT64 beyond), {@link Float} (FP16, BF16, FP32), {@link Double},
   * or for BYTES a {@link String} when the element is UTF-8 text, else its {@code byte[]}.
   */
  public Object get(int index) {
    return datatype.box(data(), index);
  }

  /** Every element in row-major order, boxed as by {@link #get(int)}; an unmodifiable list. */
  public List<Object> toList() {
    int n = elementCount();
    List<Object> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(get(i));
    }
    return Collections.unmodifiableList(out);
  }

  /** The same shape and data under another name. */
  public Tensor withName(String newName) {
    if (binary != null) {
      return new Tensor(newName, datatype, shape, count, binary);
    }
    return of(newName, datatype, shape, data());
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Tensor)) {
      return false;
    }
    Tensor t = (Tensor) o;
    return name.equals(t.name)
        && datatype == t.datatype
        && Arrays.equals(shape, t.shape)
        && Objects.deepEquals(data(), t.data());
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        name, datatype, Arrays.hashCode(shape), Arrays.deepHashCode(new Object[] {data()}));
  }

  @Override
  public String toString() {
    int n = elementCount();
    StringBuilder sb = new StringBuilder();
    sb.append("Tensor[")
        .append(name)
        .append(' ')
        .append(datatype)
        .append(' ')
        .append(Arrays.toString(shape))
        .append(" [");
    for (int i = 0; i < Math.min(n, 8); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(get(i));
    }
    if (n > 8) {
      sb.append(", ... (").append(n).append(" elements)");
    }
    return sb.append("]]").toString();
  }

  private <T> T typed(Datatype expected, Class<T> type) {
    if (datatype != expected) {
      throw new IllegalStateException("tensor '" + name + "' is " + datatype + ", not " + expected);
    }
    return type.cast(data());
  }

  static long elementCount(String name, long[] shape) {
    long count = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new InvalidInputException(
            "tensor '" + name + "' has a negative dimension in shape " + Arrays.toString(shape));
      }
      try {
        count = Math.multiplyExact(count, d);
      } catch (ArithmeticException e) {
        throw new InvalidInputException(
            "tensor '" + name + "' shape " + Arrays.toString(shape) + " is too large");
      }
    }
    if (count > Integer.MAX_VALUE - 8) {
      throw new InvalidInputException(
          "tensor '" + name + "' shape " + Arrays.toString(shape) + " is too large");
    }
    return count;
  }

  private static void flatten(String name, Object values, List<Object> out, int depth) {
    if (depth > 32) {
      throw new InvalidInputException("tensor '" + name + "' data is nested too deeply");
    }
    if (values instanceof List) {
      for (Object v : (List<?>) values) {
        flatten(name, v, out, depth + 1);
      }
    } else if (values instanceof byte[]) {
      out.add(values); // a BYTES element, decoded later
    } else if (values != null && values.getClass().isArray()) {
      int n = Array.getLength(values);
      for (int i = 0; i < n; i++) {
        flatten(name, Array.get(values, i), out, depth + 1);
      }
    } else {
      out.add(values);
    }
  }
}
