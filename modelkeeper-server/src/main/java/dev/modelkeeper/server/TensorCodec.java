package dev.modelkeeper.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads Open Inference Protocol inference requests into {@link Tensor}s ({@link InferResponses}
 * writes the answers). Stateless and thread-safe.
 *
 * <p>Tensor {@code data} may be flat (row-major) or nested; nested data must follow the declared
 * shape level by level. Every element is checked against the datatype (integers within range,
 * booleans for BOOL, strings for BYTES) while the typed array is filled, so no boxed copy of the
 * data is ever made. Structural problems are {@link BadRequestException}s, tensor problems {@link
 * InvalidInputException}s; both are answered 400.
 */
final class TensorCodec {

  /** More dimensions than any model here takes; a bound on work done for hostile shapes. */
  static final int MAX_RANK = 32;

  // ------------------------------------------------------------------------ requests

  /** Reads an inference request body that is all JSON. */
  InferRequest parseInfer(JsonNode root) {
    return parseInfer(root, null);
  }

  /**
   * Reads an inference request: the JSON header {@code root} and, for the binary tensor data
   * extension, the bytes after it ({@code binary}, little-endian, or null when the body is all
   * JSON). Inputs with a {@code binary_data_size} parameter take that many bytes of {@code binary}
   * in input order; every byte must be taken.
   */
  InferRequest parseInfer(JsonNode root, ByteBuffer binary) {
    if (!root.isObject()) {
      throw new BadRequestException("an inference request must be a JSON object");
    }
    String id = null;
    JsonNode idNode = root.get("id");
    if (idNode != null && !idNode.isNull()) {
      if (!idNode.isTextual()) {
        throw new BadRequestException("'id' must be a string");
      }
      id = idNode.textValue();
    }
    JsonNode inputs = root.get("inputs");
    if (inputs == null || !inputs.isArray()) {
      throw new BadRequestException("'inputs' must be an array of tensors");
    }
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    for (int i = 0; i < inputs.size(); i++) {
      Tensor t = parseTensor(inputs.get(i), i, binary);
      if (tensors.put(t.name(), t) != null) {
        throw new InvalidInputException("input '" + t.name() + "' is given more than once");
      }
    }
    if (binary != null && binary.hasRemaining()) {
      throw new InvalidInputException(
          "the request has " + binary.remaining() + " bytes of binary data that no input's"
              + " 'binary_data_size' claims");
    }
    Map<String, Boolean> binaryOutputs = new HashMap<>();
    Set<String> outputs = parseOutputs(root.get("outputs"), binaryOutputs);
    boolean binaryByDefault =
        flag(root.get("parameters"), "binary_data_output", "the request's parameters");
    return new InferRequest(id, tensors, outputs, binaryOutputs, binaryByDefault);
  }

  private static Set<String> parseOutputs(JsonNode outputs, Map<String, Boolean> binary) {
    if (outputs == null || outputs.isNull()) {
      return Set.of();
    }
    if (!outputs.isArray()) {
      throw new BadRequestException("'outputs' must be an array of {\"name\": ...} objects");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < outputs.size(); i++) {
      JsonNode o = outputs.get(i);
      JsonNode name = o.isObject() ? o.get("name") : null;
      if (name == null || !name.isTextual() || name.textValue().isEmpty()) {
        throw new BadRequestException("outputs[" + i + "] must be an object with a string 'name'");
      }
      names.add(name.textValue());
      JsonNode params = o.get("parameters");
      if (params != null && params.has("binary_data")) {
        binary.put(name.textValue(), flag(params, "binary_data", "outputs[" + i + "].parameters"));
      }
    }
    return names;
  }

  /** A boolean parameter; false when absent. */
  private static boolean flag(JsonNode params, String key, String where) {
    if (params == null || params.isNull()) {
      return false;
    }
    if (!params.isObject()) {
      throw new BadRequestException(where + " must be a JSON object");
    }
    JsonNode v = params.get(key);
    if (v == null || v.isNull()) {
      return false;
    }
    if (!v.isBoolean()) {
      throw new BadRequestException(where + " '" + key + "' must be true or false");
    }
    return v.booleanValue();
  }

  private static Tensor parseTensor(JsonNode in, int index, ByteBuffer binary) {
    String where = "inputs[" + index + "]";
    if (!in.isObject()) {
      throw new BadRequestException(where + " must be a JSON object");
    }
    JsonNode nameNode = in.get("name");
    if (nameNode == null || !nameNode.isTextual() || nameNode.textValue().isEmpty()) {
      throw new BadRequestException(where + " needs a string 'name'");
    }
    String name = nameNode.textValue();
    JsonNode dtNode = in.get("datatype");
    if (dtNode == null || !dtNode.isTextual()) {
      throw new BadRequestException("input '" + name + "' needs a string 'datatype'");
    }
    Datatype datatype = Datatype.parse(dtNode.textValue());
    long[] shape = parseShape(name, in.get("shape"));
    JsonNode params = in.get("parameters");
    if (params != null && params.has("binary_data_size")) {
      if (in.has("data")) {
        throw new BadRequestException(
            "input '" + name + "' has both 'data' and a 'binary_data_size' parameter");
      }
      JsonNode size = params.get("binary_data_size");
      if (!size.isIntegralNumber() || !size.canConvertToLong() || size.longValue() < 0) {
        throw new BadRequestException(
            "input '" + name + "' 'binary_data_size' must be a non-negative integer");
      }
      if (binary == null) {
        throw new BadRequestException(
            "input '" + name + "' has a 'binary_data_size' but the request carries no binary"
                + " data (send the JSON length in the Inference-Header-Content-Length header)");
      }
      return BinaryTensors.read(name, datatype, shape, binary, size.longValue());
    }
    JsonNode data = in.get("data");
    if (data == null || !data.isArray()) {
      throw new BadRequestException("input '" + name + "' needs 'data' as a JSON array");
    }
    return Tensor.of(name, datatype, shape, fill(name, datatype, shape, data));
  }

  static long[] parseShape(String name, JsonNode shape) {
    if (shape == null || !shape.isArray()) {
      throw new BadRequestException("input '" + name + "' needs 'shape' as an array of integers");
    }
    if (shape.size() > MAX_RANK) {
      throw new InvalidInputException(
          "input '" + name + "' has " + shape.size() + " dimensions; at most " + MAX_RANK);
    }
    long[] dims = new long[shape.size()];
    for (int i = 0; i < dims.length; i++) {
      JsonNode d = shape.get(i);
      if (!d.isIntegralNumber() || !d.canConvertToLong()) {
        throw new InvalidInputException(
            "input '" + name + "' shape element " + i + " is " + d + ", expected an integer");
      }
      dims[i] = d.longValue();
      if (dims[i] < 0) {
        throw new InvalidInputException(
            "input '" + name + "' has a negative dimension in shape " + Arrays.toString(dims));
      }
    }
    return dims;
  }

  /** The typed flat array of {@code data}, checked element by element. */
  private static Object fill(String name, Datatype dt, long[] shape, JsonNode data) {
    long expected = elementCount(name, shape);
    boolean nested = data.size() > 0 && data.get(0).isArray();
    if (nested) {
      checkLevel(name, shape, data, 0);
    } else if (data.size() != expected) {
      throw new InvalidInputException(
          "input '" + name + "' has shape " + Arrays.toString(shape) + " (" + expected
              + " elements) but " + data.size() + " data elements");
    }
    Object array =
        java.lang.reflect.Array.newInstance(dt.arrayType().getComponentType(), (int) expected);
    int[] next = {0};
    visit(name, dt, data, array, next, nested);
    return array;
  }

  static long elementCount(String name, long[] shape) {
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

  /** Checks that nested data follows the shape level by level. */
  private static void checkLevel(String name, long[] shape, JsonNode node, int depth) {
    if (depth == shape.length) {
      if (node.isArray()) {
        throw nestedMismatch(name, shape);
      }
      return;
    }
    if (!node.isArray() || node.size() != shape[depth]) {
      throw nestedMismatch(name, shape);
    }
    for (JsonNode child : node) {
      checkLevel(name, shape, child, depth + 1);
    }
  }

  private static InvalidInputException nestedMismatch(String name, long[] shape) {
    return new InvalidInputException(
        "input '" + name + "' has nested data that does not follow its shape "
            + Arrays.toString(shape) + "; send nested arrays matching the shape or one flat array");
  }

  /** Fills {@code array} in row-major order; nested data was checked against the shape before. */
  private static void visit(
      String name, Datatype dt, JsonNode node, Object array, int[] next, boolean nested) {
    for (JsonNode v : node) {
      if (v.isArray()) {
        if (!nested) {
          throw new InvalidInputException("input '" + name + "' mixes nested and flat data");
        }
        visit(name, dt, v, array, next, true);
      } else {
        set(name, dt, array, next[0]++, v);
      }
    }
  }

  private static void set(String name, Datatype dt, Object array, int i, JsonNode v) {
    switch (dt) {
      case FP32:
        ((float[]) array)[i] = (float) number(name, dt, i, v);
        break;
      case FP64:
        ((double[]) array)[i] = number(name, dt, i, v);
        break;
      case INT8:
        ((byte[]) array)[i] = (byte) integer(name, dt, i, v, Byte.MIN_VALUE, Byte.MAX_VALUE);
        break;
      case UINT8:
        ((byte[]) array)[i] = (byte) integer(name, dt, i, v, 0, 255);
        break;
      case INT16:
        ((short[]) array)[i] = (short) integer(name, dt, i, v, Short.MIN_VALUE, Short.MAX_VALUE);
        break;
      case INT32:
        ((int[]) array)[i] = (int) integer(name, dt, i, v, Integer.MIN_VALUE, Integer.MAX_VALUE);
        break;
      case INT64:
        ((long[]) array)[i] = integer(name, dt, i, v, Long.MIN_VALUE, Long.MAX_VALUE);
        break;
      case BOOL:
        if (!v.isBoolean()) {
          throw wrongElement(name, dt, i, v, "true or false");
        }
        ((boolean[]) array)[i] = v.booleanValue();
        break;
      case BYTES:
        if (!v.isTextual()) {
          throw wrongElement(name, dt, i, v, "a string");
        }
        ((String[]) array)[i] = v.textValue();
        break;
      default:
        throw new InvalidInputException("datatype " + dt + " is not supported");
    }
  }

  private static double number(String name, Datatype dt, int i, JsonNode v) {
    if (!v.isNumber()) {
      throw wrongElement(name, dt, i, v, "a number");
    }
    return v.doubleValue();
  }

  private static long integer(String name, Datatype dt, int i, JsonNode v, long min, long max) {
    if (!v.isIntegralNumber()) {
      throw wrongElement(name, dt, i, v, "an integer");
    }
    if (!v.canConvertToLong()) {
      throw outOfRange(name, dt, i, v.bigIntegerValue().toString(), min, max);
    }
    long value = v.longValue();
    if (value < min || value > max) {
      throw outOfRange(name, dt, i, Long.toString(value), min, max);
    }
    return value;
  }

  private static InvalidInputException wrongElement(
      String name, Datatype dt, int i, JsonNode v, String expected) {
    String shown = v.toString();
    if (shown.length() > 40) {
      shown = shown.substring(0, 40) + "...";
    }
    return new InvalidInputException(
        "input '" + name + "' element " + i + " is " + shown + "; " + dt + " needs " + expected);
  }

  private static InvalidInputException outOfRange(
      String name, Datatype dt, int i, String value, long min, long max) {
    return new InvalidInputException(
        "input '" + name + "' element " + i + " is " + value + ", outside the " + dt + " range ["
            + min + ", " + max + "]");
  }
}
