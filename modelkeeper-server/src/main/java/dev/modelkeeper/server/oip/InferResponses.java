package dev.modelkeeper.server.oip;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.server.engine.InferenceService;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.SharedMemoryRef;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Writes Open Inference Protocol inference responses and model metadata, streaming typed tensor
 * data without boxing it. Stateless apart from the shared {@link Json}, and thread-safe.
 */
final class InferResponses {

  private final Json json;
  private final SharedMemoryRegions regions;

  InferResponses(Json json, SharedMemoryRegions regions) {
    this.json = json;
    this.regions = regions;
  }

  /** The inference response: model name and version, the echoed id, and the outputs in order. */
  byte[] inferResponse(String modelName, String version, String id, Map<String, Tensor> outputs) {
    return json.stream(g -> writeHeader(g, modelName, version, id, outputs, t -> false, Set.of()));
  }

  /**
   * The response to {@code result}: all JSON, or, when the request asked for any output in binary
   * form, the JSON header followed by those outputs' bytes in output order, with the header's
   * length in {@code Inference-Header-Content-Length}.
   */
  HttpResult inferResponse(InferenceService.Result result) {
    InferRequest request = result.request();
    Map<String, Tensor> outputs = result.outcome().outputs();
    Map<String, SharedMemoryRef> shared = request.sharedOutputs();
    Predicate<Tensor> binary = t -> request.binaryOutput(t.name()) && !shared.containsKey(t.name());
    long binarySize = 0;
    for (Tensor t : outputs.values()) {
      SharedMemoryRef ref = shared.get(t.name());
      if (ref != null) {
        regions.write(t, ref);
      } else if (binary.test(t)) {
        binarySize += t.datatype().binarySize(t.data());
      }
    }
    byte[] header =
        json.stream(
            g ->
                writeHeader(
                    g,
                    result.modelName(),
                    result.outcome().version(),
                    request.id(),
                    outputs,
                    binary,
                    shared.keySet()));
    if (binarySize == 0 && outputs.values().stream().noneMatch(binary)) {
      return HttpResult.json(200, header);
    }
    if (header.length + binarySize > Integer.MAX_VALUE - 8) {
      throw new InvalidInputException("the outputs are too large for one response");
    }
    byte[] body = Arrays.copyOf(header, (int) (header.length + binarySize));
    ByteBuffer out = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
    out.position(header.length);
    for (Tensor t : outputs.values()) {
      if (binary.test(t)) {
        t.datatype().toBinary(t.data(), out);
      }
    }
    return new HttpResult(
        200,
        "application/octet-stream",
        body,
        Map.of(OipRoutes.HEADER_LENGTH, Integer.toString(header.length)));
  }

  private static void writeHeader(
      JsonGenerator g,
      String modelName,
      String version,
      String id,
      Map<String, Tensor> outputs,
      Predicate<Tensor> binary,
      Set<String> shared)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("model_name", modelName);
    g.writeStringField("model_version", version);
    if (id != null) {
      g.writeStringField("id", id);
    }
    g.writeArrayFieldStart("outputs");
    for (Tensor t : outputs.values()) {
      writeTensor(g, t, binary.test(t), shared.contains(t.name()));
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  /**
   * One output: its data, or its binary data's size, or nothing more for an output written into
   * shared memory (as Triton answers it: clients read it from their region).
   */
  private static void writeTensor(JsonGenerator g, Tensor t, boolean binary, boolean shared)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("name", t.name());
    g.writeStringField("datatype", t.datatype().oipName());
    g.writeArrayFieldStart("shape");
    for (long d : t.shape()) {
      g.writeNumber(d);
    }
    g.writeEndArray();
    if (shared) {
      // written into its region already
    } else if (binary) {
      g.writeObjectFieldStart("parameters");
      g.writeNumberField("binary_data_size", t.datatype().binarySize(t.data()));
      g.writeEndObject();
    } else {
      g.writeArrayFieldStart("data");
      JsonElements.of(t.datatype()).write(g, t);
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  /** The model metadata response of the Open Inference Protocol. */
  byte[] metadata(String name, List<String> versions, ModelMetadata md) {
    return json.stream(
        g -> {
          g.writeStartObject();
          g.writeStringField("name", name);
          g.writeArrayFieldStart("versions");
          for (String v : versions) {
            g.writeString(v);
          }
          g.writeEndArray();
          g.writeStringField("platform", md.platform());
          g.writeArrayFieldStart("inputs");
          for (TensorSpec s : md.inputs()) {
            writeSpec(g, s);
          }
          g.writeEndArray();
          g.writeArrayFieldStart("outputs");
          for (TensorSpec s : md.outputs()) {
            writeSpec(g, s);
          }
          g.writeEndArray();
          if (!md.description().isEmpty() || !md.labels().isEmpty()) {
            g.writeObjectFieldStart("parameters");
            if (!md.description().isEmpty()) {
              g.writeStringField("description", md.description());
            }
            if (!md.labels().isEmpty()) {
              g.writeArrayFieldStart("labels");
              for (String l : md.labels()) {
                g.writeString(l);
              }
              g.writeEndArray();
            }
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }

  private static void writeSpec(JsonGenerator g, TensorSpec s) throws IOException {
    g.writeStartObject();
    g.writeStringField("name", s.name());
    g.writeStringField("datatype", s.datatype().oipName());
    g.writeArrayFieldStart("shape");
    for (Long d : s.shape()) {
      g.writeNumber(d);
    }
    g.writeEndArray();
    g.writeEndObject();
  }
}
