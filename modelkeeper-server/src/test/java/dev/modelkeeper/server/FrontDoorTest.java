package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.support.RawHttp;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the server does with requests before a route runs and with the requests found answered
 * wrongly: slow and oversized bodies, encodings and content types, web origins, admission, aliases
 * that shadow models, models that can never fit, numbers that overflow, shutdown.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrontDoorTest {

  private static final String X =
      "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [2], \"data\": [1, 2]}]}";
  private static final String INFER = "/v2/models/alpha/infer";

  @Test
  void slowBody_isAnswered408JsonAndClosed_andCounted() throws Exception {
    try (ModelKeeperServer server =
            TestServer.fake(
                FakeModels.of("alpha/1"),
                b -> b.timeouts(t -> t.withBodyRead(Duration.ofMillis(500))));
        RawHttp raw = RawHttp.connect(server.port())) {
      raw.send(RawHttp.post(INFER, "Content-Length: 100") + "{");
      RawHttp.Response r = raw.readResponse();
      assertThat(r.status()).isEqualTo(408);
      assertThat(r.isJson()).isTrue();
      assertThat(r.body()).contains("did not arrive within 500 ms");
      assertThat(raw.closedByServer()).isTrue();
      assertThat(Http.to(server.port()).get("/metrics").body())
          .contains("modelkeeper_slow_client_disconnects_total 1.0");
      await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 0);
    }
  }

  @Test
  void slowHeaders_closeTheConnection() throws Exception {
    try (ModelKeeperServer server =
            TestServer.fake(
                FakeModels.of("alpha/1"),
                b -> b.timeouts(t -> t.withBodyRead(Duration.ofMillis(500))));
        RawHttp raw = RawHttp.connect(server.port())) {
      raw.send("POST " + INFER + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      assertThat(raw.closedByServer()).isTrue();
    }
  }

  @Test
  void contentLengthOverTheLimit_is413JsonBeforeAnyBodyByte() throws Exception {
    try (ModelKeeperServer server =
            TestServer.fake(
                FakeModels.of("alpha/1"), b -> b.budgets(m -> m.withMaxRequestBytes(64 * 1024)));
        RawHttp raw = RawHttp.connect(server.port())) {
      raw.send(RawHttp.post(INFER, "Content-Length: " + (10 << 20)));
      RawHttp.Response r = raw.readResponse();
      assertThat(r.status()).isEqualTo(413);
      assertThat(r.isJson()).isTrue();
      assertThat(r.body()).contains("larger than the limit of 65536 bytes");
    }
  }

  @Test
  void bodiesInOtherCodings_are415_bodiesNotInTheirCoding400_andJsonOrMissingTypesAreRead() {
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      Http http = Http.to(server.port());
      for (String encoding : List.of("br", "compress", "zstd")) {
        Response r = send(http, INFER, X, "Content-Encoding", encoding);
        assertThat(r.status()).as(encoding).isEqualTo(415);
        assertThat(r.error()).contains("Content-Encoding '" + encoding + "'");
      }
      for (String encoding : List.of("gzip", "deflate")) { // plain JSON claiming to be compressed
        Response r = send(http, INFER, X, "Content-Encoding", encoding);
        assertThat(r.status()).as(encoding).isEqualTo(400);
        assertThat(r.error()).contains("not valid " + encoding);
      }
      assertThat(send(http, INFER, X, "Content-Type", "text/plain").status()).isEqualTo(415);
      assertThat(send(http, INFER, X, "Content-Type", "application/json; charset=utf-8").status())
          .isEqualTo(200);
      assertThat(http.send("POST", INFER, X).status()).isEqualTo(200); // no Content-Type
    }
  }

  @Test
  void aSecondContentEncodingHeader_orASecondCodingInOne_is415Too() throws Exception {
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      for (String[] headers :
          List.of(
              new String[] {"Content-Encoding: deflate", "Content-Encoding: gzip"},
              new String[] {"Content-Encoding: identity, deflate, gzip"})) {
        try (RawHttp raw = RawHttp.connect(server.port())) {
          List<String> lines = new ArrayList<>(List.of(headers));
          lines.add("Content-Type: application/json");
          lines.add("Content-Length: " + X.length());
          raw.send(RawHttp.post(INFER, lines.toArray(new String[0])) + X);
          RawHttp.Response r = raw.readResponse();
          assertThat(r.status()).as("%s", lines).isEqualTo(415);
          assertThat(r.body()).contains("gzip' is not accepted");
        }
      }
    }
  }

  @Test
  void stateChangingRequestFromAForeignOrigin_is403_andChangesNothing() {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(
            models, b -> b.security(s -> s.withAllowedOrigins(List.of("https://app.example"))))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/model/add", "{\"model_id\": \"alpha/1\"}").status()).isEqualTo(200);
      Response refused = send(http, "/model/clear", "", "Origin", "https://evil.example");
      assertThat(refused.status()).isEqualTo(403);
      assertThat(refused.error()).contains("https://evil.example");
      assertThat(server.manager().keys()).containsExactly("alpha/1");
      assertThat(send(http, INFER, X, "Origin", "https://evil.example").status()).isEqualTo(403);
      assertThat(send(http, INFER, X, "Origin", "https://app.example").status()).isEqualTo(200);
      assertThat(send(http, INFER, X, "Origin", http.base()).status()).isEqualTo(200); // itself
      HttpRequest.Builder get =
          HttpRequest.newBuilder(URI.create(http.base() + "/model/registry"))
              .header("Origin", "https://evil.example")
              .GET();
      assertThat(http.send(get).status()).isEqualTo(200);
    }
  }

  @Test
  void fullInflightBudget_makesARequestWaitThen503WithRetryAfter() throws Exception {
    try (ModelKeeperServer server =
            TestServer.fake(
                FakeModels.of("alpha/1"),
                b ->
                    b.budgets(m -> m.withMaxRequestBytes(4096).withMaxInflightBytes(8192))
                        .timeouts(t -> t.withAdmission(Duration.ofMillis(300))));
        RawHttp first = RawHttp.connect(server.port());
        RawHttp second = RawHttp.connect(server.port())) {
      first.send(RawHttp.post(INFER, "Content-Length: 4096") + "{");
      second.send(RawHttp.post(INFER, "Content-Length: 4096") + "{");
      await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 8192);
      Http http = Http.to(server.port());
      Response r = http.post(INFER, X);
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.retryAfter()).isEqualTo("1");
      assertThat(r.error()).contains("in-flight request budget");
      String metrics = http.get("/metrics").body();
      assertThat(metrics)
          .contains("modelkeeper_admission_waits_total 1.0")
          .contains("modelkeeper_admission_rejections_total 1.0")
          .contains("modelkeeper_inflight_request_bytes 8192.0");
    }
  }

  @Test
  void aliasNamingARepositoryModel_is409() {
    // regression: the alias took over the model's name; its inference ran the alias's target
    FakeModels models = FakeModels.of("alpha/1", "beta/1");
    try (ModelKeeperServer server = TestServer.fake(models, b -> b)) {
      Http http = Http.to(server.port());
      Response r =
          http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"beta\"}");
      assertThat(r.status()).isEqualTo(409);
      assertThat(r.error()).contains("'beta' is the name of a repository model");
      assertThat(
              http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"a\"}")
                  .status())
          .isEqualTo(200);
      Response taken =
          http.post("/model/add", "{\"model_id\": \"beta/1\", \"model_id_alias\": \"a\"}");
      assertThat(taken.status()).isEqualTo(409);
      assertThat(http.post("/v2/models/beta/infer", X).json().get("model_name").asText())
          .isEqualTo("beta");
      assertThat(server.manager().keys()).containsExactlyInAnyOrder("a", "beta/1");
    }
  }

  @Test
  void modelLargerThanTheWholeByteBudget_is507WithoutRetryAfter() {
    // regression: 503 with Retry-After: 1, so clients retried forever
    FakeModels models = FakeModels.of("alpha/1").size("alpha/1", 10_000);
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.budgets(m -> m.withMaxBytes(5_000)))) {
      Response r = Http.to(server.port()).post(INFER, X);
      assertThat(r.status()).isEqualTo(507);
      assertThat(r.retryAfter()).isNull();
      assertThat(r.error()).contains("more than the whole byte budget");
    }
  }

  @Test
  void numberOverflowingFp32_is400() {
    // regression: 1e39 silently became Infinity
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      Response r = Http.to(server.port()).post(INFER, X.replace("[1, 2]", "[1e39, 2]"));
      assertThat(r.status()).isEqualTo(400);
      assertThat(r.error()).contains("outside the FP32 range");
    }
  }

  @Test
  void parserErrors_nameNoLibraryClassOrOption() {
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      Http http = Http.to(server.port());
      List<Response> answers =
          List.of(
              http.post(INFER, X.replace("[1, 2]", "[nan, 2]")),
              http.post("/model/add", "{\"model_id\": \"alpha/1\"} {}"),
              http.post(INFER, "[".repeat(200)));
      for (Response r : answers) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.error())
            .doesNotContain("`")
            .doesNotContain("com.fasterxml")
            .doesNotContain("Feature")
            .doesNotContain("StreamReadConstraints");
      }
    }
  }

  @Test
  void shutdown_answersWhatIsStillRunning503WithinItsTimeout_once() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    Gate gate = new Gate();
    models.gateInfer("alpha/1", gate);
    ModelKeeperServer server =
        TestServer.fake(models, b -> b.timeouts(t -> t.withShutdown(Duration.ofSeconds(2))));
    Http http = Http.to(server.port());
    CompletableFuture<Response> inFlight = CompletableFuture.supplyAsync(() -> http.post(INFER, X));
    gate.awaitEntered();
    long start = System.nanoTime();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
    await().atMost(Duration.ofSeconds(1)).until(() -> !server.isReady());
    Response r = inFlight.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.error()).isEqualTo("the server is shutting down");
    gate.open();
    closing.get(10, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(3500));
  }

  @Test
  void shutdown_startsNoModelLoad_andAnswersSuch503() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1");
    Gate gate = new Gate();
    models.gateInfer("alpha/1", gate);
    ModelKeeperServer server =
        TestServer.fake(models, b -> b.timeouts(t -> t.withShutdown(Duration.ofSeconds(2))));
    Http http = Http.to(server.port());
    CompletableFuture<Response> holding = CompletableFuture.supplyAsync(() -> http.post(INFER, X));
    gate.awaitEntered();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
    await().atMost(Duration.ofSeconds(1)).until(() -> !server.isReady());
    // a request already inside the server that needs a load (as if queued before the stop)
    Throwable refused =
        Assertions.catchThrowable(() -> server.manager().acquire("beta/1", null).close());
    assertThat(refused)
        .isInstanceOf(UnavailableException.class)
        .hasMessageContaining("shutting down");
    assertThat(models.constructions("beta/1")).isZero();
    gate.open();
    holding.get(10, TimeUnit.SECONDS);
    closing.get(10, TimeUnit.SECONDS);
  }

  private static Response send(Http http, String path, String body, String header, String value) {
    return http.send(
        HttpRequest.newBuilder(URI.create(http.base() + path))
            .timeout(Duration.ofSeconds(30))
            .header(header, value)
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)));
  }
}
