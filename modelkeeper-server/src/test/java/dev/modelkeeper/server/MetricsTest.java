package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code GET /metrics}: Prometheus text with the manager's counters, histograms and requests. */
class MetricsTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  /** The value of the sample whose name and labels start with {@code prefix}. */
  private static double sample(String text, String prefix) {
    for (String line : text.split("\n")) {
      if (line.startsWith(prefix)) {
        Matcher m = Pattern.compile(" ([-+0-9.eE]+)$").matcher(line);
        if (m.find()) {
          return Double.parseDouble(m.group(1));
        }
      }
    }
    throw new AssertionError("no sample " + prefix + " in\n" + text);
  }

  @Test
  void metrics_afterLoadsEvictionsAndRequests_reportThem() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1", "gamma/1").size("gamma/1", 700);
    models.failLoad("beta/1", new ModelLoadException("broken"));
    try (ModelKeeperServer server =
        TestServer.fake(
            models,
            b ->
                b.budgets(m -> m.withMaxModels(1))
                    .timeouts(t -> t.withLoadFailureBackoff(Duration.ofMillis(1)))
                    .withPin(List.of()))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
      assertThat(http.post("/v2/models/beta/infer", X).status()).isEqualTo(500);
      assertThat(http.post("/v2/models/gamma/infer", X).status()).isEqualTo(200);
      assertThat(http.post("/model/remove", "{\"model_id\": \"gamma\"}").status()).isEqualTo(200);
      assertThat(http.post("/v2/models/nope/infer", X).status()).isEqualTo(404);
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);

      Response r = http.get("/metrics");
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.contentType()).startsWith("text/plain");
      String text = r.body();
      assertThat(sample(text, "modelkeeper_model_loads_total")).isEqualTo(3);
      assertThat(sample(text, "modelkeeper_model_load_failures_total")).isEqualTo(1);
      assertThat(sample(text, "modelkeeper_model_removals_total")).isEqualTo(1);
      assertThat(sample(text, "modelkeeper_model_evictions_total{reason=\"count_budget\"}"))
          .isEqualTo(1);
      assertThat(sample(text, "modelkeeper_model_evictions_total{reason=\"byte_budget\"}"))
          .isZero();
      assertThat(sample(text, "modelkeeper_resident_models")).isEqualTo(1);
      assertThat(sample(text, "modelkeeper_resident_bytes")).isEqualTo(1000);
      assertThat(sample(text, "modelkeeper_active_leases")).isZero();
      assertThat(sample(text, "modelkeeper_capacity_waits_total")).isZero();
      assertThat(sample(text, "modelkeeper_capacity_rejections_total")).isZero();
      assertThat(sample(text, "modelkeeper_model_load_seconds_count")).isEqualTo(3);
      assertThat(sample(text, "modelkeeper_model_load_seconds_bucket{le=\"60.0\"}")).isEqualTo(3);
      assertThat(sample(text, "modelkeeper_inference_seconds_count{model=\"alpha/1\"}"))
          .isEqualTo(3);
      assertThat(text).contains("modelkeeper_inference_seconds_bucket{model=\"alpha/1\",le=");
      assertThat(
              sample(
                  text,
                  "modelkeeper_http_requests_total{method=\"POST\",route=\"/v2/models/{model}/infer\",status=\"200\"}"))
          .isEqualTo(4);
      assertThat(
              sample(
                  text,
                  "modelkeeper_http_requests_total{method=\"POST\",route=\"/v2/models/{model}/infer\",status=\"404\"}"))
          .isEqualTo(1);
      assertThat(
              sample(
                  text,
                  "modelkeeper_http_requests_total{method=\"POST\",route=\"/v2/models/{model}/infer\",status=\"500\"}"))
          .isEqualTo(1);
      assertThat(text)
          .contains(
              "modelkeeper_http_request_seconds_count{method=\"POST\",route=\"/model/remove\"}");
    }
  }

  @Test
  void metrics_afterCapacityRejection_countWaitsAndRejections() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1");
    Gate gate = new Gate();
    models.gateInfer("alpha/1", gate);
    try (ModelKeeperServer server =
        TestServer.fake(
            models,
            b ->
                b.budgets(m -> m.withMaxModels(1))
                    .timeouts(t -> t.withCapacity(Duration.ofMillis(200))))) {
      Http http = Http.to(server.port());
      CompletableFuture<Response> leased =
          CompletableFuture.supplyAsync(() -> http.post("/v2/models/alpha/infer", X));
      gate.awaitEntered();
      Response rejected = http.post("/v2/models/beta/infer", X);
      assertThat(rejected.status()).isEqualTo(503);
      String during = http.get("/metrics").body();
      assertThat(sample(during, "modelkeeper_active_leases")).isEqualTo(1);
      gate.open();
      assertThat(leased.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
      String text = http.get("/metrics").body();
      assertThat(sample(text, "modelkeeper_capacity_waits_total")).isEqualTo(1);
      assertThat(sample(text, "modelkeeper_capacity_rejections_total")).isEqualTo(1);
      assertThat(sample(text, "modelkeeper_active_leases")).isZero();
    }
  }
}
