package dev.modelkeeper.onnx;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.TensorInfo.OnnxTensorType;
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
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * The tensor element types of the Open Inference Protocol, each with everything that depends on it:
 * the Java array that holds a {@link Tensor}'s flat data (its {@link Layout}), how an element reads
 * as a JSON-style value and back, the little-endian binary layout of the binary tensor data
 * extension and of gRPC raw contents, the conversion to and from ONNX Runtime, and the ONNX element
 * type number. Immutable and thread-safe.
 *
 * <p>Binary layout: fixed-size types are their elements back to back, little-endian (FP16 and BF16
 * as their 2-byte bit patterns); BOOL is one byte per element (0 or 1); BYTES is, per element, a
 * 4-byte little-endian length followed by that many bytes, any bytes at all.
 *
 * <p>Unsigned types live in the signed array of their width ({@code short[]} for UINT16, read as
 * 0..65535), FP16 and BF16 as their bits in a {@code short[]}, BYTES as {@code byte[][]}. ONNX
 * Runtime's Java API has no way to create UINT16, UINT32 or UINT64 tensors ({@link
 * #javaApiCreates()} is false): a model taking one as input cannot be served, though it may return
 * them. BYTES elements reach the model and come back byte for byte, whatever the bytes (see {@link
 * OrtStrings}).
 */
public enum Datatype {
  /** {@code boolean[]}. */
  BOOL(
      Layout.BOOLEANS,
      OnnxJavaType.BOOL,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
      9,
      "bool_contents") {
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
  },
  /** {@code byte[]} read as unsigned (0..255). */
  UINT8(
      Layout.BYTES_1,
      OnnxJavaType.UINT8,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
      2,
      "uint_contents") {
    @Override
    Object box(Object data, int i) {
      return Byte.toUnsignedInt(((byte[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((byte[]) data)[i] = (byte) integral(tensor, i, value, 0, 255);
    }
  },
  /** {@code short[]} read as unsigned (0..65535). */
  UINT16(
      Layout.SHORTS,
      null,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,
      4,
      "uint_contents") {
    @Override
    Object box(Object data, int i) {
      return Short.toUnsignedInt(((short[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((short[]) data)[i] = (short) integral(tensor, i, value, 0, 0xffff);
    }
  },
  /** {@code int[]} read as unsigned (0..2^32-1). */
  UINT32(
      Layout.INTS, null, OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, 12, "uint_contents") {
    @Override
    Object box(Object data, int i) {
      return Integer.toUnsignedLong(((int[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((int[]) data)[i] = (int) integral(tensor, i, value, 0, 0xffffffffL);
    }
  },
  /** {@code long[]} read as unsigned (0..2^64-1). */
  UINT64(
      Layout.LONGS,
      null,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
      13,
      "uint64_contents") {
    @Override
    Object box(Object data, int i) {
      long v = ((long[]) data)[i];
      return v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((long[]) data)[i] = unsigned64(tensor, i, value);
    }
  },
  /** {@code byte[]}. */
  INT8(
      Layout.BYTES_1,
      OnnxJavaType.INT8,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
      3,
      "int_contents") {
    @Override
    Object box(Object data, int i) {
      return (int) ((byte[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((byte[]) data)[i] = (byte) integral(tensor, i, value, Byte.MIN_VALUE, Byte.MAX_VALUE);
    }
  },
  /** {@code short[]}. */
  INT16(
      Layout.SHORTS,
      OnnxJavaType.INT16,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,
      5,
      "int_contents") {
    @Override
    Object box(Object data, int i) {
      return (int) ((short[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((short[]) data)[i] = (short) integral(tensor, i, value, Short.MIN_VALUE, Short.MAX_VALUE);
    }
  },
  /** {@code int[]}. */
  INT32(
      Layout.INTS,
      OnnxJavaType.INT32,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
      6,
      "int_contents") {
    @Override
    Object box(Object data, int i) {
      return ((int[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((int[]) data)[i] = (int) integral(tensor, i, value, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }
  },
  /** {@code long[]}. */
  INT64(
      Layout.LONGS,
      OnnxJavaType.INT64,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
      7,
      "int64_contents") {
    @Override
    Object box(Object data, int i) {
      return ((long[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((long[]) data)[i] = integral(tensor, i, value, Long.MIN_VALUE, Long.MAX_VALUE);
    }
  },
  /** IEEE 754 half precision, its bits in a {@code short[]}; read as a {@code Float}. */
  FP16(
      Layout.SHORTS,
      OnnxJavaType.FLOAT16,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
      10,
      null) {
    @Override
    Object box(Object data, int i) {
      return HalfFloats.fp16ToFloat(((short[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      double v = number(tensor, i, value).doubleValue();
      short bits = HalfFloats.fp16FromDouble(v);
      if (Double.isFinite(v) && Float.isInfinite(HalfFloats.fp16ToFloat(bits))) {
        throw outOfRange(tensor, i, value, "+-65504");
      }
      ((short[]) data)[i] = bits;
    }
  },
  /** {@code float[]}. */
  FP32(
      Layout.FLOATS,
      OnnxJavaType.FLOAT,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
      1,
      "fp32_contents") {
    @Override
    Object box(Object data, int i) {
      return ((float[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((float[]) data)[i] = (float) number(tensor, i, value).doubleValue();
    }
  },
  /** {@code double[]}. */
  FP64(
      Layout.DOUBLES,
      OnnxJavaType.DOUBLE,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
      11,
      "fp64_contents") {
    @Override
    Object box(Object data, int i) {
      return ((double[]) data)[i];
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      ((double[]) data)[i] = number(tensor, i, value).doubleValue();
    }
  },
  /** bfloat16, its bits in a {@code short[]}; read as a {@code Float}. */
  BF16(
      Layout.SHORTS,
      OnnxJavaType.BFLOAT16,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
      16,
      null) {
    @Override
    Object box(Object data, int i) {
      return HalfFloats.bf16ToFloat(((short[]) data)[i]);
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      double v = number(tensor, i, value).doubleValue();
      short bits = HalfFloats.bf16FromDouble(v);
      if (Double.isFinite(v) && Float.isInfinite(HalfFloats.bf16ToFloat(bits))) {
        throw outOfRange(tensor, i, value, "+-3.3895314E38");
      }
      ((short[]) data)[i] = bits;
    }
  },
  /**
   * {@code byte[][]}: each element any sequence of bytes; read as a {@code String} when it is UTF-8
   * text, else as its {@code byte[]}.
   */
  BYTES(
      Layout.BYTE_STRINGS,
      OnnxJavaType.STRING,
      OnnxTensorType.ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING,
      8,
      "bytes_contents") {
    @Override
    Object box(Object data, int i) {
      byte[] b = ((byte[][]) data)[i];
      String text = utf8Text(b);
      return text != null ? text : b;
    }

    @Override
    void set(String tensor, Object data, int i, Object value) {
      if (value instanceof String) {
        ((byte[][]) data)[i] =
            utf8Encodable(tensor, i, (String) value).getBytes(StandardCharsets.UTF_8);
      } else if (value instanceof byte[]) {
        ((byte[][]) data)[i] = (byte[]) value;
      } else {
        throw wrong(tensor, i, value, "a BYTES string");
      }
    }
  };

  private final Layout layout;
  private final OnnxJavaType ortType;
  private final OnnxTensorType ortTensorType;
  private final int onnxElementType;
  private final String oipContentsField;

  Datatype(
      Layout layout,
      OnnxJavaType ortType,
      OnnxTensorType ortTensorType,
      int onnxElementType,
      String oipContentsField) {
    this.layout = layout;
    this.ortType = ortType;
    this.ortTensorType = ortTensorType;
    this.onnxElementType = onnxElementType;
    this.oipContentsField = oipContentsField;
  }

  /** The Java array class of a tensor's flat data, e.g. {@code float[].class} for FP32. */
  public Class<?> arrayType() {
    return layout.arrayType;
  }

  /** Bytes per element, or -1 for BYTES (variable length). */
  public int elementBytes() {
    return layout.elementBytes;
  }

  /** The Open Inference Protocol name, e.g. {@code "FP32"}. */
  public String oipName() {
    return name();
  }

  /**
   * The field of the Open Inference Protocol's gRPC {@code InferTensorContents} that carries this
   * type's typed contents, e.g. {@code int_contents} for INT8, INT16 and INT32; null for FP16 and
   * BF16, which travel only as raw contents.
   */
  public String oipContentsField() {
    return oipContentsField;
  }

  /** The element type number of ONNX's {@code TensorProto.DataType}, e.g. 1 for FP32. */
  public int onnxElementType() {
    return onnxElementType;
  }

  /**
   * Whether ONNX Runtime's Java API can create a tensor of this type, so that a model can take it
   * as input: false for UINT16, UINT32 and UINT64.
   */
  public boolean javaApiCreates() {
    return ortType != null;
  }

  /**
   * Reads {@code count} elements of tensor {@code tensor} from {@code src} in the binary layout
   * (see the class comment), advancing its position; {@code src} must be little-endian.
   *
   * @throws InvalidInputException when {@code src} holds fewer bytes than the elements need (a
   *     BYTES length prefix included)
   */
  public Object fromBinary(String tensor, ByteBuffer src, int count) {
    int size = layout.elementBytes;
    if (size > 0 && (long) count * size > src.remaining()) {
      throw new InvalidInputException(
          "input '"
              + tensor
              + "' needs "
              + (long) count * size
              + " bytes of "
              + this
              + " data for "
              + count
              + " elements but has "
              + src.remaining());
    }
    try {
      return layout.decode(src, count);
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
    if (layout != Layout.BYTE_STRINGS) {
      return Array.getLength(data) * layout.elementBytes;
    }
    long n = 0;
    for (byte[] b : (byte[][]) data) {
      n += 4 + b.length;
    }
    if (n > Integer.MAX_VALUE - 8) {
      throw new InvalidInputException("a BYTES tensor of " + n + " bytes is too large");
    }
    return (int) n;
  }

  /**
   * Writes {@code data} in binary layout to {@code dst}, which must be little-endian: exactly
   * {@link #binarySize} bytes, or it throws (a receiver would read a shortfall as data).
   */
  public void toBinary(Object data, ByteBuffer dst) {
    int start = dst.position();
    layout.encode(data, dst);
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

  /** A flat array of {@code count} elements read from the binary layout; see {@link Layout}. */
  Object decode(ByteBuffer src, int count) {
    return layout.decode(src, count);
  }

  /**
   * An ONNX Runtime tensor of {@code t}'s elements in {@code shape}; the caller closes it. A tensor
   * over a direct buffer in the binary layout is handed over in place when the platform is
   * little-endian (ONNX Runtime reads the same bytes); any other is copied from its array.
   *
   * @throws InvalidInputException when this type cannot reach the model through the Java API (a
   *     model taking it is refused at load; see {@link #javaApiCreates()})
   */
  OnnxTensor toOrt(OrtEnvironment env, Tensor t, long[] shape) throws OrtException {
    if (ortType == null) {
      throw new InvalidInputException(
          "input '" + t.name() + "' is " + this + ", which ONNX Runtime's Java API cannot create");
    }
    ByteBuffer raw = t.binary();
    if (raw != null && raw.isDirect() && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN) {
      return OnnxTensor.createTensor(env, raw, shape, ortType);
    }
    return layout.toOrt(env, t.name(), t.data(), shape, ortType);
  }

  /** The flat data of an ONNX Runtime tensor of this type. */
  Object fromOrt(OnnxTensor t) throws OrtException {
    return layout.fromOrt(t);
  }

  /** The datatype of an ONNX Runtime tensor's element type, or null when there is none. */
  static Datatype ofOrt(OnnxTensorType type) {
    for (Datatype d : values()) {
      if (d.ortTensorType == type) {
        return d;
      }
    }
    return null;
  }

  /**
   * Parses an Open Inference Protocol datatype name (case-insensitive).
   *
   * @throws InvalidInputException when the name is null or unknown
   */
  public static Datatype parse(String name) {
    if (name == null) {
      throw new InvalidInputException("datatype is missing");
    }
    Datatype d = tryParse(name);
    if (d == null) {
      StringBuilder known = new StringBuilder();
      for (Datatype v : values()) {
        known.append(known.length() == 0 ? "" : ", ").append(v.name());
      }
      throw new InvalidInputException("unsupported datatype '" + name + "'; supported: " + known);
    }
    return d;
  }

  /** As {@link #parse}, but null for a null or unknown name; throws nothing. */
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

  /** {@code bytes} as text when they are UTF-8, else null. */
  public static String utf8Text(byte[] bytes) {
    int n = bytes.length;
    boolean ascii = true;
    for (int i = 0; i < n && ascii; i++) {
      ascii = bytes[i] >= 0;
    }
    if (ascii) {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .decode(ByteBuffer.wrap(bytes))
          .toString(); // reports malformed input instead of replacing it
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  final InvalidInputException wrong(String tensor, int i, Object v, String expected) {
    return new InvalidInputException(
        "tensor '" + tensor + "' element " + i + " is " + describe(v) + ", expected " + expected);
  }

  final InvalidInputException outOfRange(String tensor, int i, Object v, String range) {
    return new InvalidInputException(
        "tensor '"
            + tensor
            + "' element "
            + i
            + " is "
            + v
            + ", outside the "
            + this
            + " range "
            + range);
  }

  final Number number(String tensor, int i, Object v) {
    if (v instanceof Number) {
      return (Number) v;
    }
    throw wrong(tensor, i, v, "a " + this + " number");
  }

  final long integral(String tensor, int i, Object v, long min, long max) {
    BigDecimal d = exactInteger(tensor, i, v);
    if (d.compareTo(BigDecimal.valueOf(min)) < 0 || d.compareTo(BigDecimal.valueOf(max)) > 0) {
      throw outOfRange(tensor, i, d.toPlainString(), "[" + min + ", " + max + "]");
    }
    return d.longValue();
  }

  /** A UINT64 value from 0 to 2^64-1, in the bits of a long. */
  final long unsigned64(String tensor, int i, Object v) {
    BigDecimal d = exactInteger(tensor, i, v);
    if (d.signum() < 0 || d.compareTo(MAX_UINT64) > 0) {
      throw outOfRange(tensor, i, d.toPlainString(), "[0, " + MAX_UINT64 + "]");
    }
    return d.toBigInteger().longValue(); // the low 64 bits: the unsigned value's bit pattern
  }

  private static final BigDecimal MAX_UINT64 =
      new BigDecimal(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE));

  private BigDecimal exactInteger(String tensor, int i, Object v) {
    Number n = number(tensor, i, v);
    if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte) {
      return BigDecimal.valueOf(n.longValue());
    }
    try {
      BigDecimal d =
          n instanceof BigDecimal
              ? (BigDecimal) n
              : n instanceof BigInteger
                  ? new BigDecimal((BigInteger) n)
                  : new BigDecimal(n.toString());
      d.toBigIntegerExact(); // a fraction is no integer
      return d;
    } catch (ArithmeticException | NumberFormatException e) {
      throw new InvalidInputException(
          "tensor '" + tensor + "' element " + i + " is " + n + ", expected an integral " + this);
    }
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

  /**
   * How the elements of a datatype lie in a Java array and in the binary layout, and how they cross
   * to and from ONNX Runtime: one constant per array type, shared by the datatypes of that width.
   */
  enum Layout {
    BOOLEANS(boolean[].class, 1) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        boolean[] b = (boolean[]) data;
        ByteBuffer bytes = ByteBuffer.allocateDirect(b.length).order(ByteOrder.nativeOrder());
        encode(b, bytes);
        bytes.flip();
        return OnnxTensor.createTensor(env, bytes, shape, type);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        ByteBuffer raw = t.getByteBuffer();
        return decode(raw, raw.remaining());
      }
    },
    BYTES_1(byte[].class, 1) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, ByteBuffer.wrap((byte[]) data), shape, type);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        ByteBuffer raw = t.getByteBuffer();
        return decode(raw, raw.remaining());
      }
    },
    SHORTS(short[].class, 2) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, ShortBuffer.wrap((short[]) data), shape, type);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        ShortBuffer b = t.getShortBuffer(); // FP16 and BF16 as their bits, UINT16 as INT16
        if (isWholeArray(b)) {
          return b.array(); // ONNX Runtime's copy is ours: no second one
        }
        short[] out = new short[b.remaining()];
        b.get(out);
        return out;
      }
    },
    INTS(int[].class, 4) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, IntBuffer.wrap((int[]) data), shape);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        IntBuffer b = t.getIntBuffer();
        if (isWholeArray(b)) {
          return b.array();
        }
        int[] out = new int[b.remaining()];
        b.get(out);
        return out;
      }
    },
    LONGS(long[].class, 8) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, LongBuffer.wrap((long[]) data), shape);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        LongBuffer b = t.getLongBuffer();
        if (isWholeArray(b)) {
          return b.array();
        }
        long[] out = new long[b.remaining()];
        b.get(out);
        return out;
      }
    },
    FLOATS(float[].class, 4) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, FloatBuffer.wrap((float[]) data), shape);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        FloatBuffer b = t.getFloatBuffer();
        if (isWholeArray(b)) {
          return b.array();
        }
        float[] out = new float[b.remaining()];
        b.get(out);
        return out;
      }
    },
    DOUBLES(double[].class, 8) {
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
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OnnxTensor.createTensor(env, DoubleBuffer.wrap((double[]) data), shape);
      }

      @Override
      Object fromOrt(OnnxTensor t) {
        DoubleBuffer b = t.getDoubleBuffer();
        if (isWholeArray(b)) {
          return b.array();
        }
        double[] out = new double[b.remaining()];
        b.get(out);
        return out;
      }
    },
    BYTE_STRINGS(byte[][].class, -1) {
      @Override
      Object decode(ByteBuffer src, int count) {
        byte[][] out = new byte[Math.min(count, 1 << 16)][];
        int n = 0;
        for (int i = 0; i < count; i++) {
          if (src.remaining() < 4) {
            throw new BufferUnderflowException();
          }
          int length = src.getInt();
          if (length < 0 || length > src.remaining()) {
            throw new BufferUnderflowException();
          }
          byte[] b = new byte[length];
          src.get(b);
          if (n == out.length) { // grown as elements arrive: a shape cannot claim memory alone
            out = Arrays.copyOf(out, (int) Math.min((long) n * 2, count));
          }
          out[n++] = b;
        }
        return out;
      }

      @Override
      void encode(Object data, ByteBuffer dst) {
        for (byte[] b : (byte[][]) data) {
          dst.putInt(b.length);
          dst.put(b);
        }
      }

      @Override
      OnnxTensor toOrt(
          OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
          throws OrtException {
        return OrtStrings.create(env, (byte[][]) data, shape);
      }

      @Override
      Object fromOrt(OnnxTensor t) throws OrtException {
        return OrtStrings.read(t);
      }
    };

    final Class<?> arrayType;
    final int elementBytes;

    Layout(Class<?> arrayType, int elementBytes) {
      this.arrayType = arrayType;
      this.elementBytes = elementBytes;
    }

    abstract Object decode(ByteBuffer src, int count);

    abstract void encode(Object data, ByteBuffer dst);

    /** An ONNX Runtime tensor over {@code data}; the caller closes it. */
    abstract OnnxTensor toOrt(
        OrtEnvironment env, String name, Object data, long[] shape, OnnxJavaType type)
        throws OrtException;

    abstract Object fromOrt(OnnxTensor t) throws OrtException;
  }
}
