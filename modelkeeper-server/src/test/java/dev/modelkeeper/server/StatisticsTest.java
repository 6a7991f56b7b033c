package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Triton's statistics extension ({@code GET /v2/models[/{m}[/versions/{v}]]/stats}) and Triton's
 * metrics on their own port, after a known number of inferences on the demo's iris model.
 */
class StatisticsTest {

  private static String iris(int rows) {
    StringBuilder data = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      data.append(i == 0 ? "" : ", ").append("5.1, 3.5, 1.4, 0.2");
    }
    return "{\"inputs\": [{\"name\": \"input\", \"shape\": ["
        + rows
        + ", 4], \"datatype\": \"FP32\", \"data\": ["
        + data
        + "]}]}";
  }

  private static long count(JsonNode stats, String field) {
    return stats.get("inference_stats").get(field).get("count").asLong();
  }

  private static long ns(JsonNode stats, String field) {
    return stats.get("inference_stats").get(field).get("ns").asLong();
  }

  @Test
  void stats_afterKnownInferences_countThemExactly_andTimesAddUp() throws Exception {
    try (ModelKeeperServer server = TestServer.demo(b -> b.network(n -> n.withMetricsPort(0)))) {
      Http http = Http.to(server.port());
      for (int rows : new int[] {1, 2, 1, 3}) {
        assertThat(http.post("/v2/models/iris/infer", iris(rows)).status()).isEqualTo(200);
      }
      // a failed request: rows of the wrong width fail in the model's run
      assertThat(
              http.post(
                      "/v2/models/iris/infer",
                      "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 3], \"datatype\":"
                          + " \"FP32\", \"data\": [1, 2, 3]}]}")
                  .status())
          .isEqualTo(400);

      Response r = http.get("/v2/models/iris/stats");
      assertThat(r.status()).isEqualTo(200);
      JsonNode models = r.json().get("model_stats");
      assertThat(models).hasSize(1);
      JsonNode s = models.get(0);
      assertThat(s.get("name").asText()).isEqualTo("iris");
      assertThat(s.get("version").asText()).isEqualTo("1");
      assertThat(s.get("inference_count").asLong()).isEqualTo(7);
      assertThat(s.get("execution_count").asLong()).isEqualTo(4);
      assertThat(count(s, "success")).isEqualTo(4);
      assertThat(count(s, "fail")).isEqualTo(1);
      assertThat(count(s, "queue")).isEqualTo(5);
      for (String phase : new String[] {"compute_input", "compute_infer", "compute_output"}) {
        assertThat(count(s, phase)).as(phase).isEqualTo(4);
        assertThat(ns(s, phase)).as(phase).isPositive();
      }
      assertThat(ns(s, "success"))
          .as("a request's time covers its queueing and its run's phases")
          .isGreaterThanOrEqualTo(
              ns(s, "queue")
                  + ns(s, "compute_input")
                  + ns(s, "compute_infer")
                  + ns(s, "compute_output"));
      assertThat(s.get("last_inference").asLong())
          .isBetween(System.currentTimeMillis() - 60_000, System.currentTimeMillis() + 1_000);
      JsonNode batches = s.get("batch_stats");
      assertThat(batches).hasSize(3);
      assertThat(batches.get(0).get("batch_size").asInt()).isEqualTo(1);
      assertThat(batches.get(0).get("compute_infer").get("count").asLong()).isEqualTo(2);
      assertThat(batches.get(1).get("batch_size").asInt()).isEqualTo(2);
      assertThat(batches.get(2).get("batch_size").asInt()).isEqualTo(3);
      assertThat(batches.get(2).get("compute_infer").get("count").asLong()).isEqualTo(1);

      Response versioned = http.get("/v2/models/iris/versions/1/stats");
      assertThat(versioned.status()).isEqualTo(200);
      assertThat(versioned.json().get("model_stats").get(0).get("inference_count").asLong())
          .isEqualTo(7);
      JsonNode all = http.get("/v2/models/stats").json().get("model_stats");
      assertThat(all).extracting(m -> m.get("name").asText()).containsExactly("iris");

      Response unknown = http.get("/v2/models/nope/stats");
      assertThat(unknown.status()).isEqualTo(404);
      assertThat(unknown.error()).startsWith("Request for unknown model: ").contains("'nope'");
      assertThat(http.get("/v2/models/iris/versions/9/stats").status()).isEqualTo(404);
      assertThat(http.get("/v2").body()).contains("\"statistics\"");

      // Triton's metrics, on their own port and beside ModelKeeper's on the main one
      String metrics = metricsPort(server, "GET").body();
      assertThat(metrics)
          .contains("nv_inference_count{model=\"iris\",version=\"1\"} 7\n")
          .contains("nv_inference_exec_count{model=\"iris\",version=\"1\"} 4\n")
          .contains("nv_inference_request_success{model=\"iris\",version=\"1\"} 4\n")
          .contains("nv_inference_request_failure{model=\"iris\",version=\"1\"} 1\n")
          .contains("# TYPE nv_inference_compute_infer_duration_us counter\n")
          .contains("nv_inference_pending_request_count{model=\"iris\",version=\"1\"} 0\n")
          .contains("modelkeeper_inference_seconds_count{model=\"iris/1\"}")
          .containsPattern("\nnv_cpu_utilization [01]\\.\\d+\n")
          .containsPattern("\nnv_cpu_memory_total_bytes [1-9]\\d*\n")
          .containsPattern("\nnv_cpu_memory_used_bytes [1-9]\\d*\n");
      assertThat(http.get("/metrics").body()).contains("nv_inference_count{model=\"iris\"");

      // an alias is listed under its own name, with its target's version
      assertThat(
              http.post("/model/add", "{\"model_id\": \"iris/1\", \"model_id_alias\": \"flowers\"}")
                  .status())
          .isEqualTo(200);
      assertThat(http.post("/v2/models/flowers/infer", iris(2)).status()).isEqualTo(200);
      JsonNode listed = http.get("/v2/models/stats").json().get("model_stats");
      assertThat(listed)
          .extracting(m -> m.get("name").asText() + "/" + m.get("version").asText())
          .containsExactly("flowers/1", "iris/1");
      assertThat(listed.get(0).get("inference_count").asLong()).isEqualTo(2);
      assertThat(metricsPort(server, "POST").statusCode()).isEqualTo(405);
    }
  }

  private static HttpResponse<String> metricsPort(ModelKeeperServer server, String method)
      throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics"))
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
