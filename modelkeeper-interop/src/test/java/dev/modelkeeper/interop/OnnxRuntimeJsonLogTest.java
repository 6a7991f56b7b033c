package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import dev.modelkeeper.testkit.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --log-format json} keeps its log one JSON object a line while ONNX Runtime logs
 * natively: its messages come through the server's log on the {@code onnxruntime} logger, at their
 * level, not as ONNX Runtime's own coloured stderr lines, each said once. The repository holds
 * three models ONNX Runtime complains about: one while loading it (an initializer no node uses, a
 * warning), two while running them (an output whose actual shape is not the declared one, a warning
 * on every run, logged once; a MatMul whose inner dimensions differ, which the client is answered
 * 400 and which costs no log line). The log is the server's stderr, kept apart from its stdout,
 * whose startup summary is text by design.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class OnnxRuntimeJsonLogTest {

  @TempDir Path tmp;

  @Test
  void jsonLog_withModelsOnnxRuntimeWarnsAndErrsAbout_isJsonEveryLine_withItsMessagesAtTheirLevel()
      throws Exception {
    Path repo = repository(tmp.resolve("repo"));
    Path log = tmp.resolve("stderr.log");
    ServerProcess server =
        ServerProcess.builder()
            .stderrTo(log)
            .cacheDir(tmp.resolve("cache"))
            .args("--repository", repo.toString(), "--log-format", "json")
            .start();
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      String base = "http://" + server.httpAddress();
      for (String model : List.of("unused-initializer", "shape-mismatch", "matmul-mismatch")) {
        assertThat(post(http, base + "/v2/repository/models/" + model + "/load", "").statusCode())
            .as("load %s", model)
            .isEqualTo(200);
      }
      for (int i = 0; i < 3; i++) { // ONNX Runtime warns on every run; the log says it once
        assertThat(post(http, base + "/v2/models/shape-mismatch/infer", floats(3)).statusCode())
            .as("shape-mismatch runs: ONNX Runtime only warns")
            .isEqualTo(200);
      }
      assertThat(post(http, base + "/v2/models/matmul-mismatch/infer", floats(1, 4)).statusCode())
          .as("matmul-mismatch cannot run these inputs: the client's answer, not a log line")
          .isEqualTo(400);
    } finally {
      server.stop(Duration.ofMinutes(1));
    }

    ObjectMapper json = new ObjectMapper();
    List<String> onnxRuntime = new ArrayList<>();
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    assertThat(lines).as("the log").isNotEmpty();
    for (String line : lines) {
      JsonNode event = parse(json, line);
      assertThat(event.isObject()).as("a JSON object: %s", line).isTrue();
      if (event.path("loggerName").asText().equals("onnxruntime")) {
        onnxRuntime.add(
            event.path("level").asText() + " " + event.path("formattedMessage").asText());
      }
    }
    assertThat(onnxRuntime)
        .as("ONNX Runtime's messages in %s", lines)
        .containsExactly(
            "WARN unused-initializer/1: Removing initializer 'spare'. It is not used by any node"
                + " and should be removed from the model.",
            "WARN shape-mismatch/1: Expected shape from model of {2} does not match actual shape"
                + " of {3} for output y");
  }

  private static JsonNode parse(ObjectMapper json, String line) {
    try {
      return json.readTree(line);
    } catch (JsonProcessingException e) {
      return fail("not JSON: " + line, e);
    }
  }

  /** The three models, written as ModelKeeper's demo models are. */
  private static Path repository(Path repo) {
    new OnnxGraphBuilder("unused-initializer")
        .input("x", Datatype.FP32, -1)
        .initializer("spare", new long[] {2}, new float[] {1f, 2f})
        .node("Identity", List.of("x"), List.of("y"))
        .output("y", Datatype.FP32, -1)
        .writeTo(repo.resolve("unused-initializer/1/model.onnx"));
    new OnnxGraphBuilder("shape-mismatch")
        .input("x", Datatype.FP32, -1)
        .node("Identity", List.of("x"), List.of("y"))
        .output("y", Datatype.FP32, 2)
        .writeTo(repo.resolve("shape-mismatch/1/model.onnx"));
    new OnnxGraphBuilder("matmul-mismatch")
        .input("x", Datatype.FP32, -1, -1)
        .initializer("W", new long[] {3, 2}, new float[] {1, 2, 3, 4, 5, 6})
        .node("MatMul", List.of("x", "W"), List.of("y"))
        .output("y", Datatype.FP32, -1, 2)
        .writeTo(repo.resolve("matmul-mismatch/1/model.onnx"));
    return repo;
  }

  /** An inference request body: input {@code x}, FP32 of {@code shape}, all ones. */
  private static String floats(long... shape) {
    long n = 1;
    StringBuilder dims = new StringBuilder();
    for (long d : shape) {
      n *= d;
      dims.append(dims.length() == 0 ? "" : ",").append(d);
    }
    String data = String.join(",", Collections.nCopies((int) n, "1"));
    return "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":["
        + dims
        + "],\"data\":["
        + data
        + "]}]}";
  }

  private static HttpResponse<String> post(HttpClient http, String url, String body)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
