package dev.modelkeeper.benchmarks.jars;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.benchmarks.BlockingHttpClient;
import dev.modelkeeper.benchmarks.memory.InferRequest;
import dev.modelkeeper.benchmarks.memory.ServerApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * One kind of request the benchmark sends: a demo model, one row, in JSON or with the binary tensor
 * extension. Each constant owns how its request is built; {@link #prepare} builds it against a
 * running server and checks that the server answers it with 200. Immutable and thread-safe.
 */
enum Workload {
  /** The small model in JSON: the body a user would write by hand. */
  IRIS_JSON("iris", Form.JSON) {
    @Override
    InferRequest request(String version, ServerApi api) {
      return new InferRequest(
          model() + "/" + version,
          1,
          "/v2/models/" + model() + "/infer",
          Map.of("Content-Type", "application/json"),
          IRIS_BODY.getBytes(StandardCharsets.UTF_8));
    }
  },
  IRIS_BINARY("iris", Form.BINARY),
  IRIS_GRPC("iris", Form.GRPC),
  MLP_MEDIUM_JSON("mlp-medium", Form.JSON),
  /** A medium MLP, binary tensors; its input's name and shape come from the model's metadata. */
  MLP_MEDIUM_BINARY("mlp-medium", Form.BINARY),
  MLP_MEDIUM_GRPC("mlp-medium", Form.GRPC),
  CONVNET_JSON("convnet", Form.JSON),
  /** The conv net (input {@code image}, FP32 [1,3,64,64] for one row), binary tensors. */
  CONVNET_BINARY("convnet", Form.BINARY),
  CONVNET_GRPC("convnet", Form.GRPC);

  /** How a request travels: JSON REST, REST with the binary tensor extension, gRPC raw contents. */
  enum Form {
    JSON("JSON"),
    BINARY("binary"),
    GRPC("gRPC");

    final String label;

    Form(String label) {
      this.label = label;
    }
  }

  /** The workloads of a default run: one per model, each in the form its users would pick. */
  static final List<Workload> DEFAULT = List.of(IRIS_JSON, MLP_MEDIUM_BINARY, CONVNET_BINARY);

  /** The JSON body of {@link #IRIS_JSON}: one iris flower. */
  static final String IRIS_BODY =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
          + "\"data\":[5.1,3.5,1.4,0.2]}]}";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String model;
  private final Form form;

  Workload(String model, Form form) {
    this.model = model;
    this.form = form;
  }

  Form form() {
    return form;
  }

  /** The demo model it sends to. */
  String model() {
    return model;
  }

  /** How the report names it, e.g. {@code `iris` JSON}. */
  String label() {
    return "`" + model + "` " + form.label;
  }

  /**
   * Its HTTP request for version {@code version} of the model: by default one row with the binary
   * tensor extension, shaped by the model's metadata as {@code api} reads it, the same values in
   * JSON for the JSON form (a gRPC workload sends {@link GrpcLoad#toGrpc} of the binary request).
   */
  InferRequest request(String version, ServerApi api) throws IOException {
    InferRequest binary = InferRequest.of(model, version, api.inputs(model, version), 1);
    return form == Form.JSON ? GrpcLoad.toJson(binary) : binary;
  }

  /**
   * Builds its request against the server that {@code http} and {@code api} talk to (reading the
   * model's latest version from {@code GET /v2/models/<model>}) and sends it once.
   *
   * @throws IllegalStateException naming the model, status and body when the answer is not 200
   */
  InferRequest prepare(BlockingHttpClient http, ServerApi api) throws IOException {
    InferRequest request = request(latestVersion(http), api);
    BlockingHttpClient.Response answer =
        http.post(request.path(), request.headers(), request.body());
    if (answer.status() != 200) {
      throw new IllegalStateException(
          "the first "
              + label()
              + " request ("
              + request.path()
              + ") was answered "
              + answer.status()
              + ": "
              + abbreviate(new String(answer.body(), StandardCharsets.UTF_8)));
    }
    return request;
  }

  /** The highest version the metadata of the model lists (numerically when all are numbers). */
  private String latestVersion(BlockingHttpClient http) throws IOException {
    String path = "/v2/models/" + model;
    BlockingHttpClient.Response r = http.get(path);
    if (r.status() != 200) {
      throw new IllegalStateException(
          "GET "
              + path
              + " answered "
              + r.status()
              + ": "
              + abbreviate(new String(r.body(), StandardCharsets.UTF_8)));
    }
    JsonNode versions = JSON.readTree(r.body()).path("versions");
    String latest = null;
    for (JsonNode v : versions) {
      String candidate = v.asText();
      if (latest == null || newer(candidate, latest)) {
        latest = candidate;
      }
    }
    if (latest == null) {
      throw new IllegalStateException("the metadata at " + path + " lists no versions");
    }
    return latest;
  }

  private static boolean newer(String a, String b) {
    try {
      return Long.parseLong(a) > Long.parseLong(b);
    } catch (NumberFormatException e) {
      return a.compareTo(b) > 0; // not numbers: the later name wins
    }
  }

  private static String abbreviate(String text) {
    return text.length() <= 300 ? text : text.substring(0, 300) + "...";
  }
}
