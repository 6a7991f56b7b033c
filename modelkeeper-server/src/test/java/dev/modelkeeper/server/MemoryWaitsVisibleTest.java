package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A wait for room in progress shows on {@code /model/registry}, the status page and {@code
 * /metrics}: with room for one model, a run of {@code a} held at a gate keeps its lease, so a
 * request for {@code b} waits to load it until the run ends.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MemoryWaitsVisibleTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  @Test
  void aLoadWaitingForRoom_isListedWhileItWaits_andGoneAfter() throws Exception {
    Gate run = new Gate();
    FakeModels models = FakeModels.of("a/1", "b/1").gateInfer("a/1", run);
    try (ModelKeeperServer server =
        TestServer.fake(
            models,
            c ->
                c.budgets(m -> m.withMaxModels(1))
                    .timeouts(t -> t.withCapacity(Duration.ofSeconds(60)))
                    .withPin(List.of()))) {
      Http http = Http.to(server.port());
      CompletableFuture<Http.Response> a =
          CompletableFuture.supplyAsync(() -> http.post("/v2/models/a/infer", X));
      run.awaitEntered();
      CompletableFuture<Http.Response> b =
          CompletableFuture.supplyAsync(() -> http.post("/v2/models/b/infer", X));

      JsonNode waits = http.get("/model/registry").json().path("memory").path("waits");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (waits.isEmpty() && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // polling a condition
        waits = http.get("/model/registry").json().path("memory").path("waits");
      }
      assertThat(waits).hasSize(1);
      assertThat(waits.get(0).path("model_id").asText()).isEqualTo("b/1");
      assertThat(waits.get(0).path("for").asText()).isEqualTo("load");
      assertThat(waits.get(0).path("holds_lease").asBoolean()).isFalse();
      assertThat(waits.get(0).path("waited_seconds").asDouble()).isNotNegative();
      assertThat(http.get("/").body())
          .containsPattern(
              "Waiting for room</th><td>a load of &apos;b/1&apos; for [0-9.]+ MiB, [0-9.]+ s<");
      assertThat(http.get("/metrics").body())
          .containsPattern("(?m)^modelkeeper_memory_waits 1\\.0$")
          .containsPattern("(?m)^modelkeeper_memory_wait_longest_seconds [0-9.]+(E-?[0-9]+)?$");

      run.open();
      assertThat(a.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
      assertThat(b.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
      assertThat(http.get("/model/registry").json().path("memory").path("waits")).isEmpty();
      assertThat(http.get("/").body()).contains("Waiting for room</th><td>none<");
      assertThat(http.get("/metrics").body())
          .containsPattern("(?m)^modelkeeper_memory_waits 0\\.0$");
    }
  }
}
