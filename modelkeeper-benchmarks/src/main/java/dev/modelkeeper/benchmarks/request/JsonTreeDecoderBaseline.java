package dev.modelkeeper.benchmarks.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.request.InferRequest;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The baseline of the request-memory benchmark: the inference request decoder the server had before
 * requests were streamed, kept as it was. It reads the whole body into a Jackson tree first, then
 * fills typed arrays from the tree. Stateless and thread-safe.
 */
final class JsonTreeDecoderBaseline {

  static final int MAX_RANK = 32;

  private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
      new com.fasterxml.jackson.databind.ObjectMapper(
              com.fasterxml.jackson.core.JsonFactory.builder()
                  .streamReadConstraints(
                      com.fasterxml.jackson.core.StreamReadConstraints.builder()
                          .maxNestingDepth(64)
                          .maxNumberLength(400)
                          .build())
                  .build())
          .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private JsonTreeDecoderBaseline() {}

  /** Reads a body as the server did: the whole tree, then the tensors. */
  static InferRequest decode(byte[] body) throws java.io.IOException {
    return parseInfer(MAPPER.readTree(body));
  }

  static InferRequest parseInfer(JsonNode root) {
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
      Tensor t = parseTensor(inputs.get(i), i);
      if (tensors.put(t.name(), t) != null) {
        throw new InvalidInputException("input '" + t.name() + "' is given more than once");
      }
    }
    return new InferRequest(id, tensors, parseOutputs(root.get("outputs")));
  }

  private static Set<String> parseOutputs(JsonNode outputs) {
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
    }
    return names;
  }

  private static Tensor parseTensor(JsonNode in, int index) {
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
      throw new InvalidInputException(
          "input '"
              + name
              + "' uses binary tensor data, which this server does not accept; send"
              + " 'data' as JSON");
    }
    JsonNode data = in.get("data");
    if (data == null || !data.isArray()) {
      throw new BadRequestException("input '" + name + "' needs 'data' as a JSON array");
    }
    return Tensor.of(name, datatype, shape, fill(name, datatype, shape, data));
  }

  private static long[] parseShape(String name, JsonNode shape) {
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
          "input '"
              + name
              + "' has shape "
              + Arrays.toString(shape)
              + " ("
              + expected
              + " elements) but "
              + data.size()
              + " data elements");
    }
    Object array =
        java.lang.reflect.Array.newInstance(dt.arrayType().getComponentType(), (int) expected);
    int[] next = {0};
    visit(name, dt, data, array, next, nested);
    return array;
  }

  private static long elementCount(String name, long[] shape) {
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
        "input '"
            + name
            + "' has nested data that does not follow its shape "
            + Arrays.toString(shape)
            + "; send nested arrays matching the shape or one flat array");
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
        ((byte[][]) array)[i] = v.textValue().getBytes(java.nio.charset.StandardCharsets.UTF_8);
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
        "input '"
            + name
            + "' element "
            + i
            + " is "
            + value
            + ", outside the "
            + dt
            + " range ["
            + min
            + ", "
            + max
            + "]");
  }
}
