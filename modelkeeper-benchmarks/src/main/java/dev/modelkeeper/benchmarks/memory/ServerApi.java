package dev.modelkeeper.benchmarks.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.benchmarks.BlockingHttpClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The harness's administrative calls to one server over loopback: model metadata, the registry,
 * Prometheus metrics, and loads and unloads through the repository extension. Not thread-safe: one
 * keep-alive connection, used by the harness thread only.
 */
public final class ServerApi implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final BlockingHttpClient http;

  public ServerApi(int port, Duration timeout) {
    this.http = new BlockingHttpClient("127.0.0.1", port, timeout);
  }

  /**
   * One input of a model, from its metadata.
   *
   * @param name the input's name
   * @param datatype its datatype, as the protocol spells it
   * @param shape its shape; -1 where any size goes
   */
  public record Input(String name, String datatype, long[] shape) {}

  /**
   * What the server charges a resident model and what it measured, from {@code /model/registry}.
   *
   * @param sizeBytes {@code size_bytes}, the model file's size
   * @param chargedBytes {@code charged_bytes}; -1 when the server does not report it
   * @param measuredBytes {@code measured_bytes}; -1 when absent or null
   */
  /**
   * A model's row of the registry, in bytes (-1 where the server reports nothing).
   *
   * @param measuredWorkingRows the batch {@code measuredWorkingBytes} was measured at
   */
  record Charge(
      long sizeBytes,
      long chargedBytes,
      long measuredBytes,
      long measuredLoadPeakBytes,
      long measuredWorkingBytes,
      long measuredWorkingRows) {}

  /** The inputs of {@code name}/{@code version}; the server loads the model to answer. */
  public List<Input> inputs(String name, String version) throws IOException {
    JsonNode meta = get("/v2/models/" + name + "/versions/" + version);
    List<Input> inputs = new ArrayList<>();
    for (JsonNode in : meta.path("inputs")) {
      JsonNode s = in.path("shape");
      long[] shape = new long[s.size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = s.get(i).asLong();
      }
      inputs.add(new Input(in.path("name").asText(), in.path("datatype").asText(), shape));
    }
    if (inputs.isEmpty()) {
      throw new IOException(
          "the metadata of " + name + "/" + version + " lists no inputs: " + meta);
    }
    return inputs;
  }

  /** {@code GET /model/registry}. */
  JsonNode registry() throws IOException {
    return get("/model/registry");
  }

  /**
   * The charge of resident model {@code modelId} ({@code name/version}); null when not resident.
   */
  Charge charge(String modelId) throws IOException {
    for (JsonNode m : registry().path("models")) {
      if (modelId.equals(m.path("model_id").asText())) {
        return new Charge(
            m.path("size_bytes").asLong(-1),
            bytes(m, "charged_bytes"),
            bytes(m, "measured_bytes"),
            bytes(m, "measured_load_peak_bytes"),
            bytes(m, "measured_working_bytes"),
            bytes(m, "measured_working_rows"));
      }
    }
    return null;
  }

  private static long bytes(JsonNode model, String field) {
    JsonNode v = model.get(field);
    return v == null || v.isNull() ? -1 : v.asLong();
  }

  /** Every sample of {@code GET /metrics}, keyed by its name and labels as written. */
  Map<String, Double> metrics() throws IOException {
    BlockingHttpClient.Response r = http.get("/metrics");
    if (r.status() != 200) {
      throw new IOException("GET /metrics answered " + r.status());
    }
    Map<String, Double> out = new LinkedHashMap<>();
    for (String line : new String(r.body(), StandardCharsets.UTF_8).split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      if (space > 0) {
        try {
          out.put(line.substring(0, space).trim(), Double.parseDouble(line.substring(space + 1)));
        } catch (NumberFormatException e) {
          // a timestamp or an unexpected value: not a figure the harness reads
        }
      }
    }
    return out;
  }

  /** The sum of every series of metric {@code name} (all label sets); NaN when there is none. */
  static double sum(Map<String, Double> metrics, String name) {
    double total = Double.NaN;
    for (Map.Entry<String, Double> e : metrics.entrySet()) {
      String key = e.getKey();
      if (key.equals(name) || key.startsWith(name + "{")) {
        total = (Double.isNaN(total) ? 0 : total) + e.getValue();
      }
    }
    return total;
  }

  /** The series of metric {@code name} by their labels as written, e.g. {@code {reason="idle"}}. */
  static Map<String, Double> series(Map<String, Double> metrics, String name) {
    Map<String, Double> out = new LinkedHashMap<>();
    metrics.forEach(
        (k, v) -> {
          if (k.startsWith(name + "{")) {
            out.put(k.substring(name.length()), v);
          }
        });
    return out;
  }

  /** {@code POST /v2/repository/models/<name>/load}; the status. */
  int load(String name) throws IOException {
    return http.post("/v2/repository/models/" + name + "/load", Map.of(), new byte[0]).status();
  }

  /** {@code POST /v2/repository/models/<name>/unload}; the status. */
  int unload(String name) throws IOException {
    return http.post("/v2/repository/models/" + name + "/unload", Map.of(), new byte[0]).status();
  }

  /** Sends one inference request. */
  BlockingHttpClient.Response infer(InferRequest request) throws IOException {
    return http.post(request.path(), request.headers(), request.body());
  }

  private JsonNode get(String path) throws IOException {
    BlockingHttpClient.Response r = http.get(path);
    if (r.status() != 200) {
      throw new IOException(
          "GET "
              + path
              + " answered "
              + r.status()
              + ": "
              + new String(r.body(), StandardCharsets.UTF_8));
    }
    return JSON.readTree(r.body());
  }

  @Override
  public void close() throws IOException {
    http.close();
  }
}
