package dev.modelkeeper.server.oip;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.HalfFloats;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.request.TensorInputs;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * How the elements of each tensor datatype read from and write to Open Inference Protocol JSON: the
 * one place in the server that knows it, keyed by {@link Datatype}. Stateless and thread-safe.
 *
 * <p>Reading checks every element against its datatype while the typed array is filled (integers
 * within range, numbers that fit their floating-point type, booleans for BOOL, strings for BYTES),
 * so no boxed copy of the data is ever made. Floating-point inputs may also be {@code NaN}, {@code
 * Infinity} and {@code -Infinity}, unquoted, as Python's {@code json} module writes them; a finite
 * number too large for its type is refused rather than made infinite. FP16 and BF16 are numbers,
 * rounded to the nearest value of their type. Writing is the inverse; a non-finite output is
 * written as the JSON string {@code "NaN"}, {@code "Infinity"} or {@code "-Infinity"}. A BYTES
 * output that is not UTF-8 text cannot be written as JSON: it is refused, asking for binary data.
 */
final class JsonElements {

  /** The elements of one datatype; thread-safe. */
  interface Element {
    /** A flat array of {@code n} elements of this datatype. */
    Object newArray(int n);

    /** The heap bytes one decoded element takes, to account for it before it is allocated. */
    long heapBytes();

    /** Reads the element at the parser's current token into {@code array[i]}. */
    void read(JsonParser p, Object array, int i, String tensor) throws IOException;

    /** Writes every element of {@code t}, in order, into an open JSON array. */
    void write(JsonGenerator g, Tensor t) throws IOException;
  }

  private static final Map<Datatype, Element> ELEMENTS = new EnumMap<>(Datatype.class);

  static {
    ELEMENTS.put(
        Datatype.FP32,
        element(
            float[]::new,
            4,
            (p, a, i, n) -> {
              JsonParser v = number(p, Datatype.FP32, i, n);
              float f = v.getFloatValue();
              if (Float.isInfinite(f) && !spelledOut(v)) { // a number too large, not Infinity
                throw outOfRange(p, Datatype.FP32, i, n, "+-" + Float.MAX_VALUE);
              }
              ((float[]) a)[i] = f;
            },
            (g, t) -> {
              for (float v : t.floats()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.FP64,
        element(
            double[]::new,
            8,
            (p, a, i, n) -> {
              JsonParser v = number(p, Datatype.FP64, i, n);
              double d = v.getDoubleValue();
              if (Double.isInfinite(d) && !spelledOut(v)) {
                throw outOfRange(p, Datatype.FP64, i, n, "+-" + Double.MAX_VALUE);
              }
              ((double[]) a)[i] = d;
            },
            (g, t) -> {
              for (double v : t.doubles()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.FP16,
        element(
            short[]::new,
            2,
            (p, a, i, n) -> {
              JsonParser v = number(p, Datatype.FP16, i, n);
              short bits = HalfFloats.fp16FromDouble(v.getDoubleValue());
              if (Float.isInfinite(HalfFloats.fp16ToFloat(bits)) && !spelledOut(v)) {
                throw outOfRange(p, Datatype.FP16, i, n, "+-65504");
              }
              ((short[]) a)[i] = bits;
            },
            (g, t) -> {
              for (short v : (short[]) t.data()) {
                g.writeNumber(HalfFloats.fp16ToFloat(v));
              }
            }));
    ELEMENTS.put(
        Datatype.BF16,
        element(
            short[]::new,
            2,
            (p, a, i, n) -> {
              JsonParser v = number(p, Datatype.BF16, i, n);
              short bits = HalfFloats.bf16FromDouble(v.getDoubleValue());
              if (Float.isInfinite(HalfFloats.bf16ToFloat(bits)) && !spelledOut(v)) {
                throw outOfRange(p, Datatype.BF16, i, n, "+-3.3895314E38");
              }
              ((short[]) a)[i] = bits;
            },
            (g, t) -> {
              for (short v : (short[]) t.data()) {
                g.writeNumber(HalfFloats.bf16ToFloat(v));
              }
            }));
    ELEMENTS.put(
        Datatype.INT8,
        element(
            byte[]::new,
            1,
            (p, a, i, n) ->
                ((byte[]) a)[i] =
                    (byte) integer(p, Datatype.INT8, i, n, Byte.MIN_VALUE, Byte.MAX_VALUE),
            (g, t) -> {
              for (byte v : t.bytes()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.UINT8,
        element(
            byte[]::new,
            1,
            (p, a, i, n) -> ((byte[]) a)[i] = (byte) integer(p, Datatype.UINT8, i, n, 0, 255),
            (g, t) -> {
              for (byte v : t.bytes()) {
                g.writeNumber(Byte.toUnsignedInt(v));
              }
            }));
    ELEMENTS.put(
        Datatype.INT16,
        element(
            short[]::new,
            2,
            (p, a, i, n) ->
                ((short[]) a)[i] =
                    (short) integer(p, Datatype.INT16, i, n, Short.MIN_VALUE, Short.MAX_VALUE),
            (g, t) -> {
              for (short v : t.shorts()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.UINT16,
        element(
            short[]::new,
            2,
            (p, a, i, n) -> ((short[]) a)[i] = (short) integer(p, Datatype.UINT16, i, n, 0, 0xffff),
            (g, t) -> {
              for (short v : (short[]) t.data()) {
                g.writeNumber(Short.toUnsignedInt(v));
              }
            }));
    ELEMENTS.put(
        Datatype.INT32,
        element(
            int[]::new,
            4,
            (p, a, i, n) ->
                ((int[]) a)[i] =
                    (int) integer(p, Datatype.INT32, i, n, Integer.MIN_VALUE, Integer.MAX_VALUE),
            (g, t) -> {
              for (int v : t.ints()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.UINT32,
        element(
            int[]::new,
            4,
            (p, a, i, n) ->
                ((int[]) a)[i] = (int) integer(p, Datatype.UINT32, i, n, 0, 0xffffffffL),
            (g, t) -> {
              for (int v : (int[]) t.data()) {
                g.writeNumber(Integer.toUnsignedLong(v));
              }
            }));
    ELEMENTS.put(
        Datatype.INT64,
        element(
            long[]::new,
            8,
            (p, a, i, n) ->
                ((long[]) a)[i] = integer(p, Datatype.INT64, i, n, Long.MIN_VALUE, Long.MAX_VALUE),
            (g, t) -> {
              for (long v : t.longs()) {
                g.writeNumber(v);
              }
            }));
    ELEMENTS.put(
        Datatype.UINT64,
        element(
            long[]::new,
            8,
            (p, a, i, n) -> ((long[]) a)[i] = unsigned64(p, i, n),
            (g, t) -> {
              for (long v : (long[]) t.data()) {
                if (v >= 0) {
                  g.writeNumber(v);
                } else {
                  g.writeNumber(new BigInteger(Long.toUnsignedString(v)));
                }
              }
            }));
    ELEMENTS.put(
        Datatype.BOOL,
        element(
            boolean[]::new,
            1,
            (p, a, i, n) -> {
              JsonToken token = p.currentToken();
              if (token != JsonToken.VALUE_TRUE && token != JsonToken.VALUE_FALSE) {
                throw wrongElement(p, Datatype.BOOL, i, n, "true or false");
              }
              ((boolean[]) a)[i] = token == JsonToken.VALUE_TRUE;
            },
            (g, t) -> {
              for (boolean v : t.booleans()) {
                g.writeBoolean(v);
              }
            }));
    ELEMENTS.put(
        Datatype.BYTES,
        element(
            byte[][]::new,
            TensorInputs.STRING_OVERHEAD_BYTES,
            (p, a, i, n) -> {
              if (p.currentToken() != JsonToken.VALUE_STRING) {
                throw wrongElement(p, Datatype.BYTES, i, n, "a string");
              }
              ((byte[][]) a)[i] =
                  Datatype.utf8Encodable(n, i, p.getText()).getBytes(StandardCharsets.UTF_8);
            },
            (g, t) -> {
              byte[][] elements = t.byteStrings();
              for (int i = 0; i < elements.length; i++) {
                String text = Datatype.utf8Text(elements[i]);
                if (text == null) {
                  throw new InvalidInputException(
                      "output '"
                          + t.name()
                          + "' element "
                          + i
                          + " holds bytes that are not UTF-8 text, which JSON cannot carry; ask"
                          + " for the output as binary data (its 'binary_data' parameter)");
                }
                g.writeString(text);
              }
            }));
    for (Datatype dt : Datatype.values()) {
      if (!ELEMENTS.containsKey(dt)) {
        throw new ExceptionInInitializerError("no JSON elements for " + dt);
      }
    }
  }

  private JsonElements() {}

  /** The elements of {@code datatype}. */
  static Element of(Datatype datatype) {
    return ELEMENTS.get(datatype);
  }

  @FunctionalInterface
  private interface Reader {
    void read(JsonParser p, Object array, int i, String tensor) throws IOException;
  }

  @FunctionalInterface
  private interface Writer {
    void write(JsonGenerator g, Tensor t) throws IOException;
  }

  private static Element element(
      IntFunction<Object> newArray, long heapBytes, Reader reader, Writer writer) {
    return new Element() {
      @Override
      public Object newArray(int n) {
        return newArray.apply(n);
      }

      @Override
      public long heapBytes() {
        return heapBytes;
      }

      @Override
      public void read(JsonParser p, Object array, int i, String tensor) throws IOException {
        reader.read(p, array, i, tensor);
      }

      @Override
      public void write(JsonGenerator g, Tensor t) throws IOException {
        writer.write(g, t);
      }
    };
  }

  private static JsonParser number(JsonParser p, Datatype dt, int i, String tensor)
      throws IOException {
    if (!p.currentToken().isNumeric()) {
      throw wrongElement(p, dt, i, tensor, "a number");
    }
    return p;
  }

  private static long integer(JsonParser p, Datatype dt, int i, String tensor, long min, long max)
      throws IOException {
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw wrongElement(p, dt, i, tensor, "an integer");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      throw outOfRange(p, dt, i, tensor, "[" + min + ", " + max + "]");
    }
    long value = p.getLongValue();
    if (value < min || value > max) {
      throw outOfRange(p, dt, i, tensor, "[" + min + ", " + max + "]");
    }
    return value;
  }

  /**
   * Whether the current number is one of the words {@code NaN}, {@code Infinity}, {@code -Infinity}
   * (rather than digits too large for their type); asked only of infinite values, so the text is
   * read rarely.
   */
  private static boolean spelledOut(JsonParser p) throws IOException {
    String text = p.getText();
    int first = text.startsWith("-") || text.startsWith("+") ? 1 : 0;
    return text.length() > first && Character.isLetter(text.charAt(first));
  }

  /** A UINT64 element, 0 to 2^64-1, in the bits of a long. */
  private static long unsigned64(JsonParser p, int i, String tensor) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw wrongElement(p, Datatype.UINT64, i, tensor, "an integer");
    }
    BigInteger v = p.getBigIntegerValue();
    if (v.signum() < 0 || v.bitLength() > 64) {
      throw outOfRange(p, Datatype.UINT64, i, tensor, "[0, 18446744073709551615]");
    }
    return v.longValue();
  }

  private static InvalidInputException wrongElement(
      JsonParser p, Datatype dt, int i, String tensor, String expected) throws IOException {
    return new InvalidInputException(
        "input '"
            + tensor
            + "' element "
            + i
            + " is "
            + shown(p)
            + "; "
            + dt
            + " needs "
            + expected);
  }

  private static InvalidInputException outOfRange(
      JsonParser p, Datatype dt, int i, String tensor, String range) throws IOException {
    return new InvalidInputException(
        "input '"
            + tensor
            + "' element "
            + i
            + " is "
            + shown(p)
            + ", outside the "
            + dt
            + " range "
            + range);
  }

  private static String shown(JsonParser p) throws IOException {
    JsonToken t = p.currentToken();
    String text =
        t == JsonToken.START_ARRAY
            ? "an array"
            : t == JsonToken.START_OBJECT
                ? "an object"
                : t == JsonToken.VALUE_STRING ? '"' + p.getText() + '"' : p.getText();
    return text.length() > 40 ? text.substring(0, 40) + "..." : text;
  }
}
