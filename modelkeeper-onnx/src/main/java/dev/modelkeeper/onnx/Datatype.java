package dev.modelkeeper.onnx;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.Buffer;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The tensor element types of the Open Inference Protocol that ModelKeeper supports. Each constant
 * owns everything that depends on the element type: the Java array that holds a {@link Tensor}'s
 * flat data, the element size, the little-endian binary layout of the binary tensor data extension
 * and of gRPC raw contents, the conversion to and from ONNX Runtime, and the ONNX element type
 * number. Immutable and thread-safe.
 *
 * <p>Binary layout: fixed-size types are their elements back to back, little-endian; BOOL is one
 * byte per element (0 or 1); BYTES is, per element, a 4-byte little-endian length followed by that
 * many bytes (read and written as UTF-8 text).
 *
 * <p>FP16, BF16 and the wider unsigned types are not supported; {@link #parse} rejects them with an
 * {@link InvalidInputException}.
 */
public enum Datatype {
  /** {@code boolean[]}. */
  BOOL(boolean[].class, 1, OnnxJavaType.BOOL, 9, "bool_contents") {
    @Override
    Object box(Object data, int i) {
      return ((boolean[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      if (!(value instanceof Boolean)) {
        throw wrong(tensor, i, value, "a BOOL (true/false)");
      }
      ((boolean[]) data)[i] = (Boolean) value;
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      boolean[] out = new boolean[count];
      for (int i = 0; i < count; i++) {
        out[i] = src.get() != 0;
      }
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      for (boolean b : (boolean[]) data) {
        dst.put((byte) (b ? 1 : 0));
      }
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      boolean[] b = (boolean[]) data;
      ByteBuffer bytes = ByteBuffer.allocateDirect(b.length).order(ByteOrder.nativeOrder());
      encode(b, bytes);
      bytes.flip();
      return OnnxTensor.createTensor(env, bytes, shape, OnnxJavaType.BOOL);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      ByteBuffer raw = t.getByteBuffer();
      return decode(raw, raw.remaining());
    }
  },
  /** {@code byte[]} read as unsigned (0..255). */
  UINT8(byte[].class, 1, OnnxJavaType.UINT8, 2, "uint_contents") {
    @Override
    Object box(Object data, int i) {
      return Byte.toUnsignedInt(((byte[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((byte[]) data)[i] = (byte) integral(tensor, i, value, 0, 255);
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      return INT8.decode(src, count);
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      dst.put((byte[]) data);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(
          env, ByteBuffer.wrap((byte[]) data), shape, OnnxJavaType.UINT8);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      ByteBuffer raw = t.getByteBuffer();
      return decode(raw, raw.remaining());
    }
  },
  /** {@code byte[]}. */
  INT8(byte[].class, 1, OnnxJavaType.INT8, 3, "int_contents") {
    @Override
    Object box(Object data, int i) {
      return (int) ((byte[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((byte[]) data)[i] = (byte) integral(tensor, i, value, Byte.MIN_VALUE, Byte.MAX_VALUE);
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      byte[] out = new byte[count];
      src.get(out);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      dst.put((byte[]) data);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, ByteBuffer.wrap((byte[]) data), shape, OnnxJavaType.INT8);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      ByteBuffer raw = t.getByteBuffer();
      return decode(raw, raw.remaining());
    }
  },
  /** {@code short[]}. */
  INT16(short[].class, 2, OnnxJavaType.INT16, 5, "int_contents") {
    @Override
    Object box(Object data, int i) {
      return (int) ((short[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((short[]) data)[i] = (short) integral(tensor, i, value, Short.MIN_VALUE, Short.MAX_VALUE);
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      short[] out = new short[count];
      src.asShortBuffer().get(out);
      src.position(src.position() + count * 2);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      short[] a = (short[]) data;
      dst.asShortBuffer().put(a);
      dst.position(dst.position() + a.length * 2);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(
          env, ShortBuffer.wrap((short[]) data), shape, OnnxJavaType.INT16);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      ShortBuffer b = t.getShortBuffer();
      if (isWholeArray(b)) {
        return b.array(); // ONNX Runtime's copy is ours: no second one
      }
      short[] out = new short[b.remaining()];
      b.get(out);
      return out;
    }
  },
  /** {@code int[]}. */
  INT32(int[].class, 4, OnnxJavaType.INT32, 6, "int_contents") {
    @Override
    Object box(Object data, int i) {
      return ((int[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((int[]) data)[i] = (int) integral(tensor, i, value, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      int[] out = new int[count];
      src.asIntBuffer().get(out);
      src.position(src.position() + count * 4);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      int[] a = (int[]) data;
      dst.asIntBuffer().put(a);
      dst.position(dst.position() + a.length * 4);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, IntBuffer.wrap((int[]) data), shape);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      IntBuffer b = t.getIntBuffer();
      if (isWholeArray(b)) {
        return b.array(); // ONNX Runtime's copy is ours: no second one
      }
      int[] out = new int[b.remaining()];
      b.get(out);
      return out;
    }
  },
  /** {@code long[]}. */
  INT64(long[].class, 8, OnnxJavaType.INT64, 7, "int64_contents") {
    @Override
    Object box(Object data, int i) {
      return ((long[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((long[]) data)[i] = integral(tensor, i, value, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      long[] out = new long[count];
      src.asLongBuffer().get(out);
      src.position(src.position() + count * 8);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      long[] a = (long[]) data;
      dst.asLongBuffer().put(a);
      dst.position(dst.position() + a.length * 8);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, LongBuffer.wrap((long[]) data), shape);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      LongBuffer b = t.getLongBuffer();
      if (isWholeArray(b)) {
        return b.array(); // ONNX Runtime's copy is ours: no second one
      }
      long[] out = new long[b.remaining()];
      b.get(out);
      return out;
    }
  },
  /** {@code float[]}. */
  FP32(float[].class, 4, OnnxJavaType.FLOAT, 1, "fp32_contents") {
    @Override
    Object box(Object data, int i) {
      return ((float[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((float[]) data)[i] = (float) number(tensor, i, value).doubleValue();
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      float[] out = new float[count];
      src.asFloatBuffer().get(out);
      src.position(src.position() + count * 4);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      float[] a = (float[]) data;
      dst.asFloatBuffer().put(a);
      dst.position(dst.position() + a.length * 4);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, FloatBuffer.wrap((float[]) data), shape);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      FloatBuffer b = t.getFloatBuffer();
      if (isWholeArray(b)) {
        return b.array(); // ONNX Runtime's copy is ours: no second one
      }
      float[] out = new float[b.remaining()];
      b.get(out);
      return out;
    }
  },
  /** {@code double[]}. */
  FP64(double[].class, 8, OnnxJavaType.DOUBLE, 11, "fp64_contents") {
    @Override
    Object box(Object data, int i) {
      return ((double[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((double[]) data)[i] = number(tensor, i, value).doubleValue();
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      double[] out = new double[count];
      src.asDoubleBuffer().get(out);
      src.position(src.position() + count * 8);
      return out;
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      double[] a = (double[]) data;
      dst.asDoubleBuffer().put(a);
      dst.position(dst.position() + a.length * 8);
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, DoubleBuffer.wrap((double[]) data), shape);
    }

    @Override
    Object fromOrt(OnnxTensor t) {
      DoubleBuffer b = t.getDoubleBuffer();
      if (isWholeArray(b)) {
        return b.array(); // ONNX Runtime's copy is ours: no second one
      }
      double[] out = new double[b.remaining()];
      b.get(out);
      return out;
    }
  },
  /** {@code String[]}: each element is one UTF-8 string. */
  BYTES(String[].class, -1, OnnxJavaType.STRING, 8, "bytes_contents") {
    @Override
    Object box(Object data, int i) {
      return ((String[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      if (value instanceof String) {
        ((String[]) data)[i] = utf8Encodable(tensor, i, (String) value);
      } else if (value instanceof byte[]) {
        ((String[]) data)[i] = new String((byte[]) value, StandardCharsets.UTF_8);
      } else {
        throw wrong(tensor, i, value, "a BYTES string");
      }
    }

    @Override
    Object decode(ByteBuffer src, int count) {
      List<String> out = new ArrayList<>(Math.min(count, 1 << 16));
      for (int i = 0; i < count; i++) {
        if (src.remaining() < 4) {
          throw new BufferUnderflowException();
        }
        int length = src.getInt();
        if (length < 0 || length > src.remaining()) {
          throw new BufferUnderflowException();
        }
        if (src.hasArray()) {
          out.add(
              new String(
                  src.array(), src.arrayOffset() + src.position(), length, StandardCharsets.UTF_8));
          src.position(src.position() + length);
        } else {
          byte[] b = new byte[length];
          src.get(b);
          out.add(new String(b, StandardCharsets.UTF_8));
        }
      }
      return out.toArray(new String[0]);
    }

    @Override
    void encode(Object data, ByteBuffer dst) {
      for (String s : (String[]) data) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        dst.putInt(b.length);
        dst.put(b);
      }
    }

    @Override
    public int binarySize(Object data) {
      long n = 0;
      for (String s : (String[]) data) {
        n += 4 + utf8Length(s);
      }
      if (n > Integer.MAX_VALUE - 8) {
        throw new InvalidInputException("a BYTES tensor of " + n + " bytes is too large");
      }
      return (int) n;
    }

    @Override
    OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException {
      return OnnxTensor.createTensor(env, (String[]) data, shape);
    }

    @Override
    Object fromOrt(OnnxTensor t) throws OrtException {
      List<String> flat = new ArrayList<>();
      flattenStrings(t.getValue(), flat);
      return flat.toArray(new String[0]);
    }
  };

  private final Class<?> arrayType;
  private final int elementBytes;
  private final OnnxJavaType ortType;
  private final int onnxElementType;
  private final String oipContentsField;

  Datatype(
      Class<?> arrayType,
      int elementBytes,
      OnnxJavaType ortType,
      int onnxElementType,
      String oipContentsField) {
    this.arrayType = arrayType;
    this.elementBytes = elementBytes;
    this.ortType = ortType;
    this.onnxElementType = onnxElementType;
    this.oipContentsField = oipContentsField;
  }

  /** The Java array class of a tensor's flat data, e.g. {@code float[].class} for FP32. */
  public Class<?> arrayType() {
    return arrayType;
  }

  /** Bytes per element, or -1 for BYTES (variable length). */
  public int elementBytes() {
    return elementBytes;
  }

  /** The Open Inference Protocol name, e.g. {@code "FP32"}. */
  public String oipName() {
    return name();
  }

  /**
   * The field of the Open Inference Protocol's gRPC {@code InferTensorContents} that carries this
   * type's typed contents, e.g. {@code int_contents} for INT8, INT16 and INT32.
   */
  public String oipContentsField() {
    return oipContentsField;
  }

  /** The element type number of ONNX's {@code TensorProto.DataType}, e.g. 1 for FP32. */
  public int onnxElementType() {
    return onnxElementType;
  }

  /**
   * Reads {@code count} elements of tensor {@code tensor} from {@code src} in the binary layout
   * (see the class comment), advancing its position; {@code src} must be little-endian.
   *
   * @throws InvalidInputException when {@code src} holds fewer bytes than the elements need (a
   *     BYTES length prefix included)
   */
  public Object fromBinary(String tensor, ByteBuffer src, int count) {
    if (elementBytes > 0 && (long) count * elementBytes > src.remaining()) {
      throw new InvalidInputException(
          "input '"
              + tensor
              + "' needs "
              + (long) count * elementBytes
              + " bytes of "
              + this
              + " data for "
              + count
              + " elements but has "
              + src.remaining());
    }
    try {
      return decode(src, count);
    } catch (BufferUnderflowException e) {
      throw new InvalidInputException(
          "input '"
              + tensor
              + "' has truncated BYTES data: each of its "
              + count
              + " elements needs a 4-byte little-endian length and that many bytes");
    }
  }

  /** The number of bytes of {@code data} (an array of {@link #arrayType()}) in binary layout. */
  public int binarySize(Object data) {
    return Array.getLength(data) * elementBytes;
  }

  /**
   * Writes {@code data} in binary layout to {@code dst}, which must be little-endian: exactly
   * {@link #binarySize} bytes, or it throws (a receiver would read a shortfall as data).
   */
  public void toBinary(Object data, ByteBuffer dst) {
    int start = dst.position();
    encode(data, dst);
    int written = dst.position() - start;
    int announced = binarySize(data);
    if (written != announced) {
      throw new IllegalStateException(
          this + " wrote " + written + " bytes where its binary size is " + announced);
    }
  }

  /** {@code data} in binary layout, in a new array of exactly {@link #binarySize} bytes. */
  public byte[] toBinary(Object data) {
    byte[] out = new byte[binarySize(data)];
    toBinary(data, ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN));
    return out;
  }

  /** Element {@code i} of {@code data} boxed as JSON would carry it (see {@link Tensor#get}). */
  abstract Object box(Object data, int i);

  /** Stores a loosely typed value (as a JSON parser produces it) at element {@code i}. */
  abstract void set(String tensor, Object data, int i, Object value);

  abstract Object decode(ByteBuffer src, int count);

  abstract void encode(Object data, ByteBuffer dst);

  /** An ONNX Runtime tensor over {@code data}; the caller closes it. */
  abstract OnnxTensor toOrt(OrtEnvironment env, Object data, long[] shape) throws OrtException;

  /**
   * An ONNX Runtime tensor of {@code t}'s elements in {@code shape}; the caller closes it. A tensor
   * over a direct buffer in the binary layout is handed over in place when the platform is
   * little-endian (ONNX Runtime reads the same bytes); any other is copied from its array.
   */
  OnnxTensor toOrt(OrtEnvironment env, Tensor t, long[] shape) throws OrtException {
    ByteBuffer raw = t.binary();
    if (raw != null && raw.isDirect() && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN) {
      return OnnxTensor.createTensor(env, raw, shape, ortType);
    }
    return toOrt(env, t.data(), shape);
  }

  /** The flat data of an ONNX Runtime tensor of this type. */
  abstract Object fromOrt(OnnxTensor t) throws OrtException;

  /** The datatype of an ONNX Runtime element type, or null when ModelKeeper does not support it. */
  static Datatype ofOrt(OnnxJavaType type) {
    for (Datatype d : values()) {
      if (d.ortType == type) {
        return d;
      }
    }
    return null;
  }

  /**
   * Parses an Open Inference Protocol datatype name (case-insensitive).
   *
   * @throws InvalidInputException when the name is null, unknown or unsupported
   */
  public static Datatype parse(String name) {
    if (name == null) {
      throw new InvalidInputException("datatype is missing");
    }
    Datatype d = tryParse(name);
    if (d == null) {
      throw new InvalidInputException(
          "unsupported datatype '"
              + name
              + "'; supported: BOOL, UINT8, INT8, INT16, INT32, INT64, FP32, FP64, BYTES");
    }
    return d;
  }

  /** As {@link #parse}, but null for a null, unknown or unsupported name; throws nothing. */
  public static Datatype tryParse(String name) {
    if (name == null) {
      return null;
    }
    String upper = name.trim().toUpperCase(Locale.ROOT);
    for (Datatype d : values()) {
      if (d.name().equals(upper)) {
        return d;
      }
    }
    return null;
  }

  /**
   * {@code s}, when UTF-8 can encode it. A string holding half of a surrogate pair (a JSON escape
   * of U+D800 alone, say) cannot be sent as BYTES: it is refused as bad input rather than changed.
   */
  public static String utf8Encodable(String tensor, int i, String s) {
    for (int k = 0; k < s.length(); k++) {
      char c = s.charAt(k);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && k + 1 < s.length()
            && Character.isLowSurrogate(s.charAt(k + 1))) {
          k++;
        } else {
          throw new InvalidInputException(
              String.format(
                  Locale.ROOT,
                  "tensor '%s' element %d holds a lone UTF-16 surrogate (U+%04X) at character %d,"
                      + " which UTF-8 cannot encode",
                  tensor,
                  i,
                  (int) c,
                  k));
        }
      }
    }
    return s;
  }

  /** The length of {@code s} in UTF-8 as {@link String#getBytes} writes it. */
  private static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else if (Character.isSurrogate(c)) {
        n += 1; // written as '?'
      } else {
        n += 3;
      }
    }
    return n;
  }

  private static void flattenStrings(Object value, List<String> out) {
    if (value instanceof String) {
      out.add((String) value);
    } else if (value != null && value.getClass().isArray()) {
      int n = Array.getLength(value);
      for (int i = 0; i < n; i++) {
        flattenStrings(Array.get(value, i), out);
      }
    }
  }

  final InvalidInputException wrong(String tensor, int i, Object v, String expected) {
    return new InvalidInputException(
        "tensor '" + tensor + "' element " + i + " is " + describe(v) + ", expected " + expected);
  }

  final Number number(String tensor, int i, Object v) {
    if (v instanceof Number) {
      return (Number) v;
    }
    throw wrong(tensor, i, v, "a " + this + " number");
  }

  final long integral(String tensor, int i, Object v, long min, long max) {
    Number n = number(tensor, i, v);
    long value;
    if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte) {
      value = n.longValue();
    } else {
      try {
        BigDecimal d =
            n instanceof BigDecimal
                ? (BigDecimal) n
                : n instanceof BigInteger
                    ? new BigDecimal((BigInteger) n)
                    : new BigDecimal(n.toString());
        value = d.longValueExact();
      } catch (ArithmeticException | NumberFormatException e) {
        throw new InvalidInputException(
            "tensor '" + tensor + "' element " + i + " is " + n + ", expected an integral " + this);
      }
    }
    if (value < min || value > max) {
      throw new InvalidInputException(
          "tensor '"
              + tensor
              + "' element "
              + i
              + " is "
              + value
              + ", outside the "
              + this
              + " range ["
              + min
              + ", "
              + max
              + "]");
    }
    return value;
  }

  private static String describe(Object v) {
    return v == null ? "null" : v.getClass().getSimpleName() + " " + v;
  }

  /** Whether {@code b} is all of its backing array, from its start: that array can be kept. */
  private static boolean isWholeArray(Buffer b) {
    return b.hasArray()
        && b.arrayOffset() == 0
        && b.position() == 0
        && Array.getLength(b.array()) == b.remaining();
  }
}
