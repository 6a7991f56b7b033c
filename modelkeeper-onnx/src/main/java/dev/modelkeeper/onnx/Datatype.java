package dev.modelkeeper.onnx;

import java.util.Locale;

/**
 * The tensor element types of the Open Inference Protocol that ModelKeeper supports, with the Java
 * array that holds a {@link Tensor}'s flat data. Immutable and thread-safe.
 *
 * <p>FP16, BF16 and the wider unsigned types are not supported; {@link #parse} rejects them with an
 * {@link InvalidInputException}.
 */
public enum Datatype {
  /** {@code boolean[]}. */
  BOOL(boolean[].class, 1),
  /** {@code byte[]} read as unsigned (0..255). */
  UINT8(byte[].class, 1),
  /** {@code byte[]}. */
  INT8(byte[].class, 1),
  /** {@code short[]}. */
  INT16(short[].class, 2),
  /** {@code int[]}. */
  INT32(int[].class, 4),
  /** {@code long[]}. */
  INT64(long[].class, 8),
  /** {@code float[]}. */
  FP32(float[].class, 4),
  /** {@code double[]}. */
  FP64(double[].class, 8),
  /** {@code String[]}: each element is one UTF-8 string. */
  BYTES(String[].class, -1);

  private final Class<?> arrayType;
  private final int elementBytes;

  Datatype(Class<?> arrayType, int elementBytes) {
    this.arrayType = arrayType;
    this.elementBytes = elementBytes;
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
   * Parses an Open Inference Protocol datatype name (case-insensitive).
   *
   * @throws InvalidInputException when the name is null, unknown or unsupported
   */
  public static Datatype parse(String name) {
    if (name == null) {
      throw new InvalidInputException("datatype is missing");
    }
    try {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(
          "unsupported datatype '" + name + "'; supported: BOOL, UINT8, INT8, INT16, INT32, INT64, FP32, FP64, BYTES");
    }
  }
}
