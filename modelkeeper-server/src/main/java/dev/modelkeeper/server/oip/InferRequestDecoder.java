package dev.modelkeeper.server.oip;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestBody;
import dev.modelkeeper.server.oip.sharedmemory.SharedMemoryParameters;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.request.SharedMemoryRef;
import dev.modelkeeper.server.request.TensorInputs;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decodes an Open Inference Protocol JSON inference request from its body stream with Jackson's
 * streaming parser, straight into typed tensor arrays: no tree of the data is ever built. Stateless
 * apart from the shared {@link Json}; thread-safe.
 *
 * <p>A tensor's {@code name}, {@code datatype} and {@code shape} must come before its {@code data}:
 * the shape is checked (rank, element count against what the body can hold) and the tensor's bytes
 * are reserved in the request's {@link RequestBytes} before its array is allocated, and every
 * element is checked against the datatype as it is stored ({@link JsonElements}). Data may be flat
 * (row-major) or nested; nested data must follow the shape level by level.
 *
 * <p>Every failure is a {@link BadRequestException} or {@link InvalidInputException} (400), a
 * {@link PayloadTooLargeException} (413) when the tensors cannot fit the in-flight budget, or an
 * {@link UnavailableException} (503) when their bytes did not become free in time or the request
 * was abandoned meanwhile.
 */
public final class InferRequestDecoder {

  /** Elements decoded between checks that the request is still wanted. */
  private static final int ABANDON_CHECK = 1 << 16;

  private final Json json;
  private final SharedMemoryRegions regions;

  /** A decoder for a server without shared memory: a region named by a request is unknown. */
  public InferRequestDecoder(Json json) {
    this(json, new SharedMemoryRegions(0));
  }

  /** A decoder that reads inputs placed in shared memory from {@code regions}. */
  public InferRequestDecoder(Json json, SharedMemoryRegions regions) {
    this.json = json;
    this.regions = regions;
  }

  /** Decodes a request body of {@code bodyLength} bytes, reserving its tensors in {@code bytes}. */
  public InferRequest decode(InputStream body, long bodyLength, RequestBytes bytes) {
    return decode(body, bodyLength, bytes, -1);
  }

  /**
   * Decodes a request body of {@code bodyLength} bytes whose first {@code headerLength} bytes are
   * the JSON request and the rest binary tensor data (the binary tensor data extension), or that is
   * all JSON when {@code headerLength} is negative. Inputs with a {@code binary_data_size}
   * parameter take that many bytes of the binary part, in input order; every byte must be taken.
   * Tensors are reserved in {@code bytes} before they are allocated.
   */
  public InferRequest decode(
      InputStream body, long bodyLength, RequestBytes bytes, long headerLength) {
    if (headerLength > bodyLength) {
      throw new BadRequestException(
          OipRoutes.HEADER_LENGTH
              + " is "
              + headerLength
              + " but the body has "
              + bodyLength
              + " bytes");
    }
    long jsonLength = headerLength < 0 ? bodyLength : headerLength;
    InputStream header = headerLength < 0 ? body : new BoundedInputStream(body, headerLength);
    try (JsonParser p = json.parser(header)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw new BadRequestException("request body is empty; expected a JSON object");
      }
      if (t != JsonToken.START_OBJECT) {
        throw new BadRequestException("an inference request must be a JSON object");
      }
      String id = null;
      List<Input> inputs = null;
      Set<String> outputs = Set.of();
      Map<String, Boolean> binaryOutputs = new HashMap<>();
      Map<String, Integer> classifications = new HashMap<>();
      Map<String, SharedMemoryRef> sharedOutputs = new HashMap<>();
      boolean binaryByDefault = false;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        switch (field) {
          case "id":
            id = readId(p);
            break;
          case "inputs":
            inputs = readInputs(p, jsonLength, bytes);
            break;
          case "outputs":
            outputs = readOutputs(p, binaryOutputs, classifications, sharedOutputs);
            break;
          case "parameters":
            binaryByDefault = readFlag(p, "binary_data_output", "the request's 'parameters'");
            break;
          default:
            p.skipChildren();
        }
      }
      if (p.nextToken() != null) {
        throw new BadRequestException("malformed JSON: content after the request object");
      }
      if (inputs == null) {
        throw new BadRequestException("'inputs' must be an array of tensors");
      }
      Map<String, Tensor> tensors =
          binaryInputs(inputs, body, headerLength < 0 ? -1 : bodyLength - headerLength, bytes);
      return new InferRequest(
          id,
          tensors,
          outputs,
          binaryOutputs,
          binaryByDefault,
          classifications,
          RequestTrace.NONE,
          sharedOutputs);
    } catch (JsonProcessingException e) {
      throw new BadRequestException(Json.describe(e));
    } catch (IOException e) {
      throw new BadRequestException("cannot read the request body");
    }
  }

  private static String readId(JsonParser p) throws IOException {
    switch (p.currentToken()) {
      case VALUE_NULL:
        return null;
      case VALUE_STRING:
        return p.getText();
      default:
        throw new BadRequestException("'id' must be a string");
    }
  }

  /**
   * The inputs as tensors, those in binary form read from the rest of {@code body} ({@code
   * binaryLength} bytes, or -1 when the request has no binary part).
   */
  private Map<String, Tensor> binaryInputs(
      List<Input> inputs, InputStream body, long binaryLength, RequestBytes bytes)
      throws IOException {
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    ByteBuffer binary = null;
    if (binaryLength >= 0) {
      // the decoded tensors: none beyond the body when it is off-heap (fixed-size tensors are read
      // in place there), except BYTES elements, which become strings on the heap
      boolean inPlace = body instanceof RequestBody.Stream && ((RequestBody.Stream) body).offHeap();
      bytes.reserve(inPlace ? binaryBytesElements(inputs) : binaryLength);
      // a view of the received body when it can be (no copy), else the bytes read out of it
      binary =
          (body instanceof RequestBody.Stream
                  ? ((RequestBody.Stream) body).readBuffer((int) binaryLength)
                  : ByteBuffer.wrap(body.readNBytes((int) binaryLength)))
              .order(ByteOrder.LITTLE_ENDIAN);
      if (binary.remaining() != binaryLength) {
        throw new BadRequestException("the request body ended before its binary data");
      }
    }
    for (Input in : inputs) {
      Tensor t;
      if (in.tensor() != null) {
        t = in.tensor();
      } else if (in.shared() != null) {
        // not in the body, but held in memory all the same once copied out of the region
        bytes.reserve(in.shared().byteSize() + stringOverhead(in, in.shared().byteSize()));
        t = regions.read(in.name(), in.datatype(), in.shape(), in.shared());
      } else if (binary == null) {
        throw new BadRequestException(
            "input '"
                + in.name()
                + "' has a 'binary_data_size' but the request carries no binary"
                + " data (send the JSON length in the "
                + OipRoutes.HEADER_LENGTH
                + " header)");
      } else {
        bytes.reserve(stringOverhead(in, in.binarySize()));
        t = TensorInputs.read(in.name(), in.datatype(), in.shape(), binary, in.binarySize());
      }
      if (tensors.put(t.name(), t) != null) {
        throw new InvalidInputException("input '" + t.name() + "' is given more than once");
      }
    }
    if (binary != null && binary.hasRemaining()) {
      throw new InvalidInputException(
          "the request has "
              + binary.remaining()
              + " bytes of binary data that no input's"
              + " 'binary_data_size' claims");
    }
    return tensors;
  }

  /**
   * For a BYTES input of {@code size} bytes, a string per element beyond its bytes, counted before
   * they exist; each element needs at least its 4-byte length, so the data bounds the count
   * whatever the shape claims. 0 for other datatypes.
   */
  private static long stringOverhead(Input in, long size) {
    return in.datatype() != Datatype.BYTES
        ? 0
        : Math.min(TensorInputs.elementCount(in.name(), in.shape()), size / 4)
            * TensorInputs.STRING_OVERHEAD_BYTES;
  }

  /** The binary bytes the BYTES inputs among {@code inputs} claim. */
  private static long binaryBytesElements(List<Input> inputs) {
    long n = 0;
    for (Input in : inputs) {
      if (in.tensor() == null && in.shared() == null && in.datatype() == Datatype.BYTES) {
        n += in.binarySize();
      }
    }
    return n;
  }

  /**
   * One decoded input: its tensor, or, for binary data, what is needed to read it.
   *
   * @param name the input name
   * @param datatype its datatype
   * @param shape its shape
   * @param tensor the tensor of JSON data, or null for binary data
   * @param binarySize the bytes of binary data, or -1
   * @param shared where it lies in shared memory, or null
   */
  private record Input(
      String name,
      Datatype datatype,
      long[] shape,
      Tensor tensor,
      long binarySize,
      SharedMemoryRef shared) {}

  /** A boolean in a {@code parameters} object (the parser is at its start); false when absent. */
  private static boolean readFlag(JsonParser p, String key, String where) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_NULL) {
      return false;
    }
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw new BadRequestException(where + " must be a JSON object");
    }
    boolean value = false;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      if (field.equals(key)) {
        if (v != JsonToken.VALUE_TRUE && v != JsonToken.VALUE_FALSE) {
          throw new BadRequestException(where + " '" + key + "' must be true or false");
        }
        value = v == JsonToken.VALUE_TRUE;
      } else {
        p.skipChildren();
      }
    }
    return value;
  }

  private static Set<String> readOutputs(
      JsonParser p,
      Map<String, Boolean> binaryOutputs,
      Map<String, Integer> classifications,
      Map<String, SharedMemoryRef> sharedOutputs)
      throws IOException {
    if (p.currentToken() == JsonToken.VALUE_NULL) {
      return Set.of();
    }
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw new BadRequestException("'outputs' must be an array of {\"name\": ...} objects");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
      String name = null;
      Boolean binary = null;
      int classes = 0;
      String where = "outputs[" + i + "].parameters";
      SharedMemoryParameters shm = new SharedMemoryParameters();
      if (p.currentToken() == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken v = p.nextToken();
          if (field.equals("name") && v == JsonToken.VALUE_STRING) {
            name = p.getText();
          } else if (field.equals("parameters") && v == JsonToken.START_OBJECT) {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String key = p.currentName();
              JsonToken pv = p.nextToken();
              if (key.equals("binary_data")) {
                if (pv != JsonToken.VALUE_TRUE && pv != JsonToken.VALUE_FALSE) {
                  throw new BadRequestException(where + " 'binary_data' must be true or false");
                }
                binary = pv == JsonToken.VALUE_TRUE;
              } else if (key.equals(TensorInputs.CLASSIFICATION)) {
                if (pv != JsonToken.VALUE_NUMBER_INT) {
                  throw new BadRequestException(
                      where + " 'classification' must be a whole number of classes");
                }
                classes = TensorInputs.classCount(p.getLongValue(), where);
              } else if (!shm.read(key, p, where)) {
                p.skipChildren();
              }
            }
          } else {
            p.skipChildren();
          }
        }
      }
      if (name == null || name.isEmpty()) {
        throw new BadRequestException("outputs[" + i + "] must be an object with a string 'name'");
      }
      names.add(name);
      if (binary != null) {
        binaryOutputs.put(name, binary);
      }
      if (classes > 0) {
        classifications.put(name, classes);
      }
      SharedMemoryRef ref = shm.ref("output '" + name + "'");
      if (ref != null) {
        sharedOutputs.put(name, ref);
      }
    }
    return names;
  }

  private static List<Input> readInputs(JsonParser p, long bodyLength, RequestBytes bytes)
      throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw new BadRequestException("'inputs' must be an array of tensors");
    }
    List<Input> inputs = new ArrayList<>();
    for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
      inputs.add(readTensor(p, i, bodyLength, bytes));
    }
    return inputs;
  }

  private static Input readTensor(JsonParser p, int index, long bodyLength, RequestBytes bytes)
      throws IOException {
    String where = "inputs[" + index + "]";
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw new BadRequestException(where + " must be a JSON object");
    }
    String name = null;
    Datatype datatype = null;
    long[] shape = null;
    Object data = null;
    long binarySize = -1;
    SharedMemoryParameters shm = new SharedMemoryParameters();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      switch (field) {
        case "name":
          if (v != JsonToken.VALUE_STRING || p.getText().isEmpty()) {
            throw new BadRequestException(where + " needs a string 'name'");
          }
          name = p.getText();
          break;
        case "datatype":
          if (v != JsonToken.VALUE_STRING) {
            throw new BadRequestException(label(name, where) + " needs a string 'datatype'");
          }
          datatype = Datatype.parse(p.getText());
          break;
        case "shape":
          shape = readShape(p, label(name, where));
          break;
        case "parameters":
          binarySize = readParameters(p, label(name, where), shm);
          break;
        case "data":
          if (v != JsonToken.START_ARRAY) {
            throw new BadRequestException(label(name, where) + " needs 'data' as a JSON array");
          }
          if (name == null || datatype == null || shape == null) {
            throw new BadRequestException(
                label(name, where)
                    + ": 'name', 'datatype' and 'shape' must come before 'data'"
                    + " in a tensor object");
          }
          data = readData(p, name, datatype, shape, bodyLength, bytes);
          break;
        default:
          p.skipChildren();
      }
    }
    if (name == null) {
      throw new BadRequestException(where + " needs a string 'name'");
    }
    if (datatype == null) {
      throw new BadRequestException("input '" + name + "' needs a string 'datatype'");
    }
    if (shape == null) {
      throw new BadRequestException("input '" + name + "' needs 'shape' as an array of integers");
    }
    SharedMemoryRef shared = shm.ref("input '" + name + "'");
    if (binarySize >= 0 || shared != null) {
      if (data != null || (binarySize >= 0 && shared != null)) {
        throw new BadRequestException(
            "input '"
                + name
                + "' has more than one of 'data', a 'binary_data_size' parameter and"
                + " shared memory parameters");
      }
      TensorInputs.elementCount(name, shape);
      return new Input(name, datatype, shape, null, binarySize, shared);
    }
    if (data == null) {
      throw new BadRequestException("input '" + name + "' needs 'data' as a JSON array");
    }
    return new Input(name, datatype, shape, Tensor.of(name, datatype, shape, data), -1, null);
  }

  private static String label(String name, String where) {
    return name != null ? "input '" + name + "'" : where;
  }

  /**
   * The input's {@code binary_data_size} parameter, or -1 when absent; shared memory ones go to
   * {@code shm}; skips the others.
   */
  private static long readParameters(JsonParser p, String label, SharedMemoryParameters shm)
      throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      p.skipChildren();
      return -1;
    }
    long size = -1;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      if (field.equals("binary_data_size")) {
        if (v != JsonToken.VALUE_NUMBER_INT
            || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
            || p.getLongValue() < 0) {
          throw new BadRequestException(
              label + " 'binary_data_size' must be a non-negative integer");
        }
        size = p.getLongValue();
      } else if (!shm.read(field, p, label)) {
        p.skipChildren();
      }
    }
    return size;
  }

  private static long[] readShape(JsonParser p, String label) throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw new BadRequestException(label + " needs 'shape' as an array of integers");
    }
    long[] dims = new long[TensorInputs.MAX_RANK];
    int rank = 0;
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (rank == TensorInputs.MAX_RANK) {
        throw new InvalidInputException(
            label + " has more than " + TensorInputs.MAX_RANK + " dimensions");
      }
      if (p.currentToken() != JsonToken.VALUE_NUMBER_INT
          || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
        String shown = p.currentToken().isScalarValue() ? p.getText() : "not a number";
        throw new InvalidInputException(
            label + " shape element " + rank + " is " + shown + ", expected an integer");
      }
      long d = p.getLongValue();
      if (d < 0) {
        long[] seen = Arrays.copyOf(dims, rank + 1);
        seen[rank] = d;
        throw new InvalidInputException(
            label + " has a negative dimension in shape " + Arrays.toString(seen));
      }
      dims[rank++] = d;
    }
    return Arrays.copyOf(dims, rank);
  }

  /** Reads {@code data} (the parser is at its opening bracket) into a typed flat array. */
  private static Object readData(
      JsonParser p, String name, Datatype dt, long[] shape, long bodyLength, RequestBytes bytes)
      throws IOException {
    long n = TensorInputs.elementCount(name, shape);
    // each element takes at least two bytes of JSON ("0,"): a bound checked before allocating
    if (n > bodyLength / 2 + 1) {
      throw new InvalidInputException(
          "input '"
              + name
              + "' has shape "
              + Arrays.toString(shape)
              + " ("
              + n
              + " elements), more than its request body of "
              + bodyLength
              + " bytes can hold");
    }
    JsonElements.Element element = JsonElements.of(dt);
    bytes.reserve(n * element.heapBytes());
    Object array = element.newArray((int) n);
    Fill fill = new Fill(p, name, element, array, shape, bytes);
    JsonToken first = p.nextToken();
    if (first == JsonToken.START_ARRAY) {
      if (shape.length == 0) {
        throw fill.nestedMismatch();
      }
      fill.nested(0, first);
    } else {
      fill.flat(first, n);
    }
    return array;
  }

  /** At most {@code limit} bytes of another stream (the JSON header of a binary request). */
  private static final class BoundedInputStream extends InputStream {
    private final InputStream in;
    private long left;

    BoundedInputStream(InputStream in, long limit) {
      this.in = in;
      this.left = limit;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
      }
      return b;
    }

    @Override
    public int read(byte[] dst, int off, int len) throws IOException {
      if (left <= 0) {
        return len == 0 ? 0 : -1;
      }
      int n = in.read(dst, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }

    /** The parser closes its source; the rest of the body is still to be read. */
    @Override
    public void close() {}
  }

  /** Fills one tensor's array from the parser; used once, on the decoding thread. */
  private static final class Fill {
    private final JsonParser p;
    private final String name;
    private final JsonElements.Element element;
    private final Object array;
    private final long[] shape;
    private final RequestBytes bytes;
    private int next;

    Fill(
        JsonParser p,
        String name,
        JsonElements.Element element,
        Object array,
        long[] shape,
        RequestBytes bytes) {
      this.p = p;
      this.name = name;
      this.element = element;
      this.array = array;
      this.shape = shape;
      this.bytes = bytes;
    }

    /** Flat data: the parser is at the first element (or the closing bracket). */
    void flat(JsonToken first, long expected) throws IOException {
      long count = 0;
      for (JsonToken t = first; t != JsonToken.END_ARRAY; t = p.nextToken()) {
        if (t == JsonToken.START_ARRAY) {
          throw new InvalidInputException("input '" + name + "' mixes nested and flat data");
        }
        if (count < expected) {
          store();
        } else {
          p.skipChildren();
        }
        count++;
      }
      if (count != expected) {
        throw new InvalidInputException(
            "input '"
                + name
                + "' has shape "
                + Arrays.toString(shape)
                + " ("
                + expected
                + " elements) but "
                + count
                + " data elements");
      }
    }

    /**
     * Nested data: the children of a level-{@code depth} array, the first of which the parser has
     * just read ({@code firstChild}, or the closing bracket).
     */
    void nested(int depth, JsonToken firstChild) throws IOException {
      long count = 0;
      boolean leafLevel = depth == shape.length - 1;
      for (JsonToken t = firstChild; t != JsonToken.END_ARRAY; t = p.nextToken()) {
        if (count == shape[depth]) {
          throw nestedMismatch();
        }
        count++;
        if (leafLevel) {
          if (t == JsonToken.START_ARRAY) {
            throw nestedMismatch();
          }
          store();
        } else {
          if (t != JsonToken.START_ARRAY) {
            throw nestedMismatch();
          }
          nested(depth + 1, p.nextToken());
        }
      }
      if (count != shape[depth]) {
        throw nestedMismatch();
      }
    }

    private void store() throws IOException {
      if ((next & (ABANDON_CHECK - 1)) == 0) {
        bytes.checkNotAbandoned();
      }
      element.read(p, array, next, name);
      next++;
    }

    InvalidInputException nestedMismatch() {
      return new InvalidInputException(
          "input '"
              + name
              + "' has nested data that does not follow its shape "
              + Arrays.toString(shape)
              + "; send nested arrays matching the shape or one flat array");
    }
  }
}
