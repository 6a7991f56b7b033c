package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.config.InvalidConfigException;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModel;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Startup readiness, preloading and pinning, and graceful shutdown. */
class LifecycleHttpTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  @Test
  void healthReady_whilePreloading_answers400ThenAfterPreload200() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1");
    Gate gate = new Gate();
    models.gateLoad("beta/1", gate);
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.withPreload(List.of("alpha", "beta/1")))) {
      Http http = Http.to(server.port());
      gate.awaitEntered();
      Response starting = http.get("/v2/health/ready");
      assertThat(starting.status()).isEqualTo(400);
      assertThat(starting.error()).contains("starting");
      assertThat(http.get("/v2/health/live").status()).isEqualTo(200);
      assertThat(server.isReady()).isFalse();
      gate.open();
      assertThat(server.awaitReady(Duration.ofSeconds(30))).isTrue();
      assertThat(http.get("/v2/health/ready").status()).isEqualTo(200);
      assertThat(server.manager().keys()).containsExactlyInAnyOrder("alpha/1", "beta/1");
    }
  }

  @Test
  void pin_withCountBudget_keepsPinnedModelResident() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1", "gamma/1");
    try (ModelKeeperServer server =
        TestServer.fake(
            models, b -> b.budgets(m -> m.withMaxModels(2)).withPin(List.of("alpha")))) {
      assertThat(server.awaitReady(Duration.ofSeconds(30))).isTrue();
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/beta/infer", X).status()).isEqualTo(200);
      assertThat(http.post("/v2/models/gamma/infer", X).status()).isEqualTo(200);
      assertThat(http.post("/v2/models/beta/infer", X).status()).isEqualTo(200);
      assertThat(server.manager().keys()).contains("alpha/1").hasSize(2);
      assertThat(http.get("/model/registry").json().get("models").get(0).get("pinned").asBoolean())
          .isTrue();
    }
  }

  @Test
  void start_withUnknownPreloadModel_failsNamingTheSetting() {
    FakeModels models = FakeModels.of("alpha/1");
    assertThatThrownBy(() -> TestServer.fake(models, b -> b.withPreload(List.of("nope"))))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("preload")
        .hasMessageContaining("nope");
  }

  @Test
  void start_onPortInUse_failsNamingThePort() {
    try (ModelKeeperServer first = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      assertThatThrownBy(
              () ->
                  TestServer.fake(
                      FakeModels.of("alpha/1"), b -> b.network(n -> n.withPort(first.port()))))
          .isInstanceOf(InvalidConfigException.class)
          .satisfies(e -> assertThat(((InvalidConfigException) e).setting()).isEqualTo("port"));
    }
  }

  @Test
  void close_withInferenceInFlight_finishesItRefusesNewConnectionsAndUnloads() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    Gate gate = new Gate();
    models.gateInfer("alpha/1", gate);
    ModelKeeperServer server = TestServer.fake(models, b -> b);
    int port = server.port();
    Http http = Http.to(port);
    CompletableFuture<Response> inFlight =
        CompletableFuture.supplyAsync(() -> http.post("/v2/models/alpha/infer", X));
    gate.awaitEntered();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> refused(port));
    assertThat(closing).isNotDone();
    gate.open();
    Response r = inFlight.get(30, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("outputs").get(0).get("data").get(0).asDouble()).isEqualTo(2.0);
    closing.get(30, TimeUnit.SECONDS);
    FakeModel model = models.built().get(0);
    assertThat(model.isCleared()).isTrue();
    assertThat(model.violations()).isEmpty();
    assertThat(server.manager().keys()).isEmpty();
    assertThat(server.isReady()).isFalse();
  }

  private static boolean refused(int port) {
    try {
      Http.to(port).get("/v2/health/live");
      return false;
    } catch (UncheckedIOException e) {
      return true;
    }
  }
}
