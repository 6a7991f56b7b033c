package dev.modelkeeper.server;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Writes Open Inference Protocol inference responses and model metadata, streaming typed tensor
 * data without boxing it. Stateless apart from the shared {@link Json}, and thread-safe.
 */
final class InferResponses {

  private final Json json;

  InferResponses(Json json) {
    this.json = json;
  }

  /** The inference response: model name and version, the echoed id, and the outputs in order. */
  byte[] inferResponse(String modelName, String version, String id, Map<String, Tensor> outputs) {
    return json.stream(
        g -> {
          g.writeStartObject();
          g.writeStringField("model_name", modelName);
          g.writeStringField("model_version", version);
          if (id != null) {
            g.writeStringField("id", id);
          }
          g.writeArrayFieldStart("outputs");
          for (Tensor t : outputs.values()) {
            writeTensor(g, t);
          }
          g.writeEndArray();
          g.writeEndObject();
        });
  }

  private static void writeTensor(JsonGenerator g, Tensor t) throws IOException {
    g.writeStartObject();
    g.writeStringField("name", t.name());
    g.writeStringField("datatype", t.datatype().oipName());
    g.writeArrayFieldStart("shape");
    for (long d : t.shape()) {
      g.writeNumber(d);
    }
    g.writeEndArray();
    g.writeArrayFieldStart("data");
    JsonElements.of(t.datatype()).write(g, t);
    g.writeEndArray();
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
