package dev.modelkeeper.onnx;

/**
 * The 16-bit floating-point formats of FP16 (IEEE 754 binary16) and BF16 (bfloat16, the upper half
 * of a binary32), held as their raw bits in a {@code short}: conversion to {@code float} (exact)
 * and from {@code double} (rounded to nearest, ties to even, as numpy and ONNX Runtime round).
 * Stateless and thread-safe.
 */
public final class HalfFloats {

  private HalfFloats() {}

  /** The value of FP16 {@code bits}; exact. */
  public static float fp16ToFloat(short bits) {
    int h = bits & 0xffff;
    int sign = (h & 0x8000) << 16;
    int exponent = (h >>> 10) & 0x1f;
    int mantissa = h & 0x3ff;
    if (exponent == 0x1f) { // infinity or NaN, payload kept
      return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    }
    if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
      float magnitude = mantissa * 0x1p-24f;
      return sign == 0 ? magnitude : -magnitude;
    }
    return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }

  /** {@code value} rounded to the nearest FP16, ties to even; beyond its range, infinite. */
  public static short fp16FromDouble(double value) {
    return fp16FromFloat(roundToOdd(value));
  }

  /** {@code value} rounded to the nearest FP16, ties to even; beyond its range, infinite. */
  public static short fp16FromFloat(float value) {
    int bits = Float.floatToRawIntBits(value);
    int sign = (bits >>> 16) & 0x8000;
    int exponent = (bits >>> 23) & 0xff;
    int mantissa = bits & 0x7fffff;
    if (exponent == 0xff) { // infinity, or NaN kept quiet with its upper payload
      return (short) (sign | 0x7c00 | (mantissa == 0 ? 0 : 0x200 | (mantissa >>> 13)));
    }
    int e = exponent - 127 + 15;
    if (e >= 0x1f) {
      return (short) (sign | 0x7c00);
    }
    if (e <= 0) { // a subnormal FP16 (or zero): the whole mantissa shifted into 10 bits
      if (e < -10) {
        return (short) sign; // below half the smallest subnormal
      }
      int full = mantissa | 0x800000;
      int shift = 14 - e;
      return (short) (sign | roundedShift(full, shift));
    }
    // carries from rounding run into the exponent, up to infinity, as they should
    return (short) (sign | ((e << 10) + roundedShift(mantissa, 13)));
  }

  /** The value of BF16 {@code bits}; exact. */
  public static float bf16ToFloat(short bits) {
    return Float.intBitsToFloat((bits & 0xffff) << 16);
  }

  /** {@code value} rounded to the nearest BF16, ties to even; beyond its range, infinite. */
  public static short bf16FromDouble(double value) {
    float f = roundToOdd(value);
    int bits = Float.floatToRawIntBits(f);
    if (Float.isNaN(f)) {
      return (short) ((bits >>> 16) | 0x40);
    }
    return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
  }

  /** {@code value >>> shift}, rounded to nearest, ties to even. */
  private static int roundedShift(int value, int shift) {
    int kept = value >>> shift;
    int rest = value & ((1 << shift) - 1);
    int half = 1 << (shift - 1);
    if (rest > half || (rest == half && (kept & 1) != 0)) {
      kept++;
    }
    return kept;
  }

  /**
   * {@code value} as a float rounded to odd (toward zero, the last bit set when inexact): rounding
   * that float again to a format at least two bits narrower gives the same result as rounding
   * {@code value} once, which a plain double-to-float cast followed by a second rounding does not.
   */
  private static float roundToOdd(double value) {
    float f = (float) value;
    if (Double.isNaN(value) || Double.isInfinite(f) || (double) f == value) {
      return f;
    }
    int bits = Float.floatToRawIntBits(f);
    if (Math.abs((double) f) > Math.abs(value)) {
      bits--; // rounded away from zero: step back toward it
    }
    return Float.intBitsToFloat(bits | 1);
  }
}
