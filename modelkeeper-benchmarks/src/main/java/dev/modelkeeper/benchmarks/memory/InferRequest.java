package dev.modelkeeper.benchmarks.memory;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.onnx.Datatype;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One prepared inference request with the binary tensor extension: a JSON header naming each
 * input's {@code binary_data_size}, then the inputs' little-endian bytes (encoded by the server's
 * own {@link Datatype}), outputs asked for in binary too. Built once and sent many times, as load
 * generators send prepared bodies. Immutable and thread-safe (the body is not copied: do not modify
 * it).
 *
 * @param modelId {@code name/version}
 * @param rows rows in the request (the size given to each input's first variable dimension)
 * @param path the infer path
 * @param headers {@code Content-Type} and {@code Inference-Header-Content-Length}
 * @param body the header and the tensors' bytes
 */
public record InferRequest(
    String modelId, int rows, String path, Map<String, String> headers, byte[] body) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * A request of {@code rows} rows for {@code name}/{@code version} with {@code inputs} (from its
   * metadata): the first variable dimension of each input takes {@code rows}, any other variable
   * one takes 1. Floating-point inputs hold pseudo-random values in [0, 1), other numbers zero,
   * strings {@code "x"}.
   */
  public static InferRequest of(
      String name, String version, List<ServerApi.Input> inputs, int rows) {
    ObjectNode header = JSON.createObjectNode();
    ArrayNode list = header.putArray("inputs");
    ByteArrayOutputStream data = new ByteArrayOutputStream();
    SplittableRandom random = new SplittableRandom(name.hashCode());
    for (ServerApi.Input in : inputs) {
      long[] shape = in.shape().clone();
      boolean batched = false;
      long count = 1;
      for (int i = 0; i < shape.length; i++) {
        if (shape[i] < 0) {
          shape[i] = batched ? 1 : rows;
          batched = true;
        }
        count *= shape[i];
      }
      Datatype type = Datatype.parse(in.datatype());
      byte[] bytes = type.toBinary(values(type, Math.toIntExact(count), random));
      ObjectNode tensor = list.addObject();
      tensor.put("name", in.name());
      tensor.put("datatype", in.datatype());
      ArrayNode s = tensor.putArray("shape");
      for (long d : shape) {
        s.add(d);
      }
      tensor.putObject("parameters").put("binary_data_size", bytes.length);
      data.writeBytes(bytes);
    }
    header.putObject("parameters").put("binary_data_output", true);
    byte[] head = header.toString().getBytes(StandardCharsets.UTF_8);
    byte[] body = new byte[head.length + data.size()];
    System.arraycopy(head, 0, body, 0, head.length);
    System.arraycopy(data.toByteArray(), 0, body, head.length, data.size());
    return new InferRequest(
        name + "/" + version,
        rows,
        "/v2/models/" + name + "/versions/" + version + "/infer",
        Map.of(
            "Content-Type",
            "application/octet-stream",
            "Inference-Header-Content-Length",
            Integer.toString(head.length)),
        body);
  }

  /** {@code count} values of {@code type}, as its Java array type. */
  private static Object values(Datatype type, int count, SplittableRandom random) {
    Object array = java.lang.reflect.Array.newInstance(type.arrayType().getComponentType(), count);
    if (array instanceof float[] f) {
      for (int i = 0; i < count; i++) {
        f[i] = (float) random.nextDouble();
      }
    } else if (array instanceof double[] d) {
      for (int i = 0; i < count; i++) {
        d[i] = random.nextDouble();
      }
    } else if (array instanceof byte[][] s) {
      java.util.Arrays.fill(s, new byte[] {'x'});
    }
    return array;
  }
}
