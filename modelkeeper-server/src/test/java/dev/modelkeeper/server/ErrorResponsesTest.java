package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Each error mapping as a client sees it over loopback, produced by the real cause. */
class ErrorResponsesTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  @Test
  void infer_whenBudgetHoldsOnlyPinnedModels_answers503WithRetryAfter() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1");
    try (ModelKeeperServer server =
        TestServer.fake(
            models, b -> b.budgets(m -> m.withMaxModels(1)).withPin(List.of("alpha")))) {
      assertThat(server.awaitReady(Duration.ofSeconds(30))).isTrue();
      Response r = Http.to(server.port()).post("/v2/models/beta/infer", X);
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.retryAfter()).isEqualTo("1");
      assertThat(r.error()).contains("beta/1");
      assertThat(server.manager().keys()).containsExactly("alpha/1");
    }
  }

  @Test
  void infer_whileAnotherLoadOutlastsLifecycleTimeout_answers503WithRetryAfter() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    Gate gate = new Gate();
    models.gateLoad("alpha/1", gate);
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.timeouts(t -> t.withLifecycle(Duration.ofMillis(300))))) {
      Http http = Http.to(server.port());
      CompletableFuture<Response> first =
          CompletableFuture.supplyAsync(() -> http.post("/v2/models/alpha/infer", X));
      gate.awaitEntered();
      Response second = http.post("/v2/models/alpha/infer", X);
      assertThat(second.status()).isEqualTo(503);
      assertThat(second.retryAfter()).isNotNull();
      assertThat(second.error()).contains("timed out").contains("alpha/1");
      gate.open();
      assertThat(first.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    }
  }

  @Test
  void infer_rightAfterFailedLoad_answers503WithBackoffRetryAfter() {
    FakeModels models = FakeModels.of("alpha/1");
    models.failLoad("alpha/1", new ModelLoadException("corrupt weights"));
    try (ModelKeeperServer server =
        TestServer.fake(
            models, b -> b.timeouts(t -> t.withLoadFailureBackoff(Duration.ofSeconds(30))))) {
      Http http = Http.to(server.port());
      Response failed = http.post("/v2/models/alpha/infer", X);
      assertThat(failed.status()).isEqualTo(500);
      assertThat(failed.error()).contains("corrupt weights");
      Response backoff = http.post("/v2/models/alpha/infer", X);
      assertThat(backoff.status()).isEqualTo(503);
      assertThat(Integer.parseInt(backoff.retryAfter())).isBetween(1, 30);
      assertThat(models.constructions("alpha/1")).isEqualTo(1);
    }
  }

  @Test
  void infer_whenModelThrowsUnexpectedly_answers500NamingRequestIdOnly() {
    FakeModels models = FakeModels.of("alpha/1");
    models.failInfer("alpha/1", new IllegalStateException("secret internals"));
    try (ModelKeeperServer server = TestServer.fake(models, b -> b)) {
      Http http = Http.to(server.port());
      Response r =
          http.send(
              HttpRequest.newBuilder(URI.create(http.base() + "/v2/models/alpha/infer"))
                  .header("X-Request-Id", "trace-77")
                  .POST(BodyPublishers.ofString(X)));
      assertThat(r.status()).isEqualTo(500);
      assertThat(r.error()).contains("trace-77").doesNotContain("secret internals");
      models.failInfer("alpha/1", null);
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
    }
  }

  @Test
  void infer_withBodyOverLimit_answers413AsJson() {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.budgets(m -> m.withMaxRequestBytes(4096)))) {
      Http http = Http.to(server.port());
      StringBuilder data = new StringBuilder("[0");
      for (int i = 1; i < 2000; i++) {
        data.append(",").append(i);
      }
      data.append("]");
      String big =
          "{\"inputs\":[{\"name\":\"x\",\"shape\":[2000],\"datatype\":\"FP32\",\"data\":"
              + data
              + "}]}";
      Response r = http.post("/v2/models/alpha/infer", big);
      assertThat(r.status()).isEqualTo(413);
      assertThat(r.error()).isNotBlank();
      assertThat(models.constructions("alpha/1")).isZero();
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
    }
  }

  @Test
  void infer_outlivingRequestTimeout_answers503AndLeaseIsReleasedLater() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    Gate gate = new Gate();
    models.gateInfer("alpha/1", gate);
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.timeouts(t -> t.withRequest(Duration.ofMillis(300))))) {
      Http http = Http.to(server.port());
      Response r = http.post("/v2/models/alpha/infer", X);
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.error()).contains("request timeout");
      assertThat(r.retryAfter()).isEqualTo("1");
      gate.awaitEntered();
      assertThat(server.manager().stats().activeLeases()).isEqualTo(1);
      gate.open();
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> server.manager().stats().activeLeases() == 0);
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
    }
  }

  @Test
  void request_toUnknownRoute_answers404AsJson() {
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      Http http = Http.to(server.port());
      Response r = http.get("/v3/nothing");
      assertThat(r.status()).isEqualTo(404);
      assertThat(r.contentType()).startsWith("application/json");
      assertThat(r.error()).contains("/v3/nothing");
      // a known path with a wrong method is 405 (MethodNotAllowedTest); an unknown one stays 404
      assertThat(http.send("DELETE", "/v3/nothing", null).status()).isEqualTo(404);
    }
  }
}
