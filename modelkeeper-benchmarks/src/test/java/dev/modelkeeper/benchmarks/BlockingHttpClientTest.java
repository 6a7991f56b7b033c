package dev.modelkeeper.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The benchmarks' blocking HTTP client against the real server over loopback. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BlockingHttpClientTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final byte[] IRIS_JSON =
      ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
              + "\"data\":[5.1,3.5,1.4,0.2]}]}")
          .getBytes(StandardCharsets.UTF_8);

  @TempDir static Path repo;
  private static ModelKeeperServer server;

  @BeforeAll
  static void start() throws Exception {
    DemoRepository.materialize(repo);
    server =
        ModelKeeperServer.start(
            ServerConfig.of(new LocalModelRepository(repo))
                .network(n -> n.withHost("127.0.0.1").withPort(0).withGrpcPort(-1)));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static BlockingHttpClient client() {
    return new BlockingHttpClient("127.0.0.1", server.port(), Duration.ofSeconds(30));
  }

  @Test
  void post_json_readsStatusHeadersAndTheWholeBody_twiceOnOneConnection() throws Exception {
    try (BlockingHttpClient http = client()) {
      for (int i = 0; i < 2; i++) {
        BlockingHttpClient.Response r =
            http.post(
                "/v2/models/iris/infer", Map.of("Content-Type", "application/json"), IRIS_JSON);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("Content-Type")).startsWith("application/json");
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.path("model_name").asText()).isEqualTo("iris");
        assertThat(body.path("outputs").size()).isPositive();
      }
    }
  }

  @Test
  void post_binary_splitsTheJsonHeaderFromTheOutputsBytes() throws Exception {
    byte[] header =
        ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                + "\"parameters\":{\"binary_data_size\":16}}],"
                + "\"parameters\":{\"binary_data_output\":true}}")
            .getBytes(StandardCharsets.UTF_8);
    ByteBuffer body = ByteBuffer.allocate(header.length + 16).order(ByteOrder.LITTLE_ENDIAN);
    body.put(header).putFloat(5.1f).putFloat(3.5f).putFloat(1.4f).putFloat(0.2f);
    try (BlockingHttpClient http = client()) {
      BlockingHttpClient.Response r =
          http.post(
              "/v2/models/iris/infer",
              Map.of(
                  "Content-Type",
                  "application/octet-stream",
                  "Inference-Header-Content-Length",
                  Integer.toString(header.length)),
              body.array());
      assertThat(r.status()).isEqualTo(200);
      int jsonLength = Integer.parseInt(r.header("inference-header-content-length"));
      JsonNode json = JSON.readTree(new String(r.body(), 0, jsonLength, StandardCharsets.UTF_8));
      long binary = 0;
      for (JsonNode out : json.path("outputs")) {
        binary += out.path("parameters").path("binary_data_size").asLong();
      }
      assertThat(binary).isPositive();
      assertThat(r.body()).hasSize(jsonLength + (int) binary);
    }
  }

  @Test
  void get_thenPost_onOneConnection() throws Exception {
    try (BlockingHttpClient http = client()) {
      BlockingHttpClient.Response live = http.get("/v2/health/live");
      assertThat(live.status()).isEqualTo(200);
      assertThat(JSON.readTree(live.body()).path("live").asBoolean()).isTrue();
      assertThat(
              http.post(
                      "/v2/models/iris/infer",
                      Map.of("Content-Type", "application/json"),
                      IRIS_JSON)
                  .status())
          .isEqualTo(200);
    }
  }

  @Test
  void post_errorStatus_isReturnedWithItsBody() throws Exception {
    try (BlockingHttpClient http = client()) {
      BlockingHttpClient.Response r =
          http.post(
              "/v2/models/no-such-model/infer",
              Map.of("Content-Type", "application/json"),
              IRIS_JSON);
      assertThat(r.status()).isEqualTo(404);
      assertThat(JSON.readTree(r.body()).path("error").asText()).contains("no-such-model");
    }
  }

  @Test
  void post_afterTheServerClosedTheConnection_opensANewOne() throws Exception {
    try (BlockingHttpClient http = client()) {
      BlockingHttpClient.Response closing =
          http.post(
              "/v2/models/iris/infer",
              Map.of("Content-Type", "application/json", "Connection", "close"),
              IRIS_JSON);
      assertThat(closing.status()).isEqualTo(200);
      assertThat(closing.header("Connection")).isEqualToIgnoringCase("close");
      BlockingHttpClient.Response next =
          http.post("/v2/models/iris/infer", Map.of("Content-Type", "application/json"), IRIS_JSON);
      assertThat(next.status()).isEqualTo(200);
    }
  }
}
