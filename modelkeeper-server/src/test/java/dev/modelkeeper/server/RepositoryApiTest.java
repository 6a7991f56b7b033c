package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The repository extension over loopback: index states and reasons, load, unload, eviction. */
class RepositoryApiTest {

  private FakeModels models;
  private ModelKeeperServer server;
  private Http http;

  @BeforeEach
  void start() {
    models = FakeModels.of("alpha/1", "alpha/2", "beta/1", "gamma/1");
    server = TestServer.fake(models, b -> b.budgets(m -> m.withMaxModels(2)));
    http = Http.to(server.port());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private Map<String, JsonNode> index(String body) {
    Response r = http.post("/v2/repository/index", body);
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    Map<String, JsonNode> rows = new HashMap<>();
    for (JsonNode row : r.json()) {
      rows.put(row.get("name").asText() + "/" + row.get("version").asText(), row);
    }
    return rows;
  }

  @Test
  void index_beforeAnyLoad_listsEveryVersionUnavailable() {
    Map<String, JsonNode> rows = index("");
    assertThat(rows).containsOnlyKeys("alpha/1", "alpha/2", "beta/1", "gamma/1");
    for (JsonNode row : rows.values()) {
      assertThat(row.get("state").asText()).isEqualTo("UNAVAILABLE");
      assertThat(row.get("reason").asText()).startsWith("not loaded");
    }
  }

  @Test
  void load_ofName_loadsHighestVersionAndIndexShowsReady() {
    Response r = http.post("/v2/repository/models/alpha/load", "");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("version").asText()).isEqualTo("2");
    Map<String, JsonNode> rows = index("{}");
    assertThat(rows.get("alpha/2").get("state").asText()).isEqualTo("READY");
    assertThat(rows.get("alpha/2").get("reason").asText()).isEmpty();
    assertThat(rows.get("alpha/1").get("state").asText()).isEqualTo("UNAVAILABLE");
  }

  @Test
  void load_withFileParameters_withoutAuthToken_isRefused403NamingTheOption() {
    Response r =
        http.post(
            "/v2/repository/models/beta/load",
            "{\"parameters\": {\"config\": \"{}\", \"file:1/model.onnx\": \"AAEC\"}}");
    assertThat(r.status()).as(r.toString()).isEqualTo(403);
    assertThat(r.error()).contains("--auth-token");
    assertThat(models.constructions("beta/1")).isZero();
  }

  @Test
  void load_withUnknownOrMistypedParameter_isRefused400() {
    Response unknown =
        http.post("/v2/repository/models/beta/load", "{\"parameters\": {\"colour\": \"red\"}}");
    assertThat(unknown.status()).as(unknown.toString()).isEqualTo(400);
    assertThat(unknown.error()).contains("'colour'").contains("'config'");
    Response notBase64 =
        http.post(
            "/v2/repository/models/beta/load",
            "{\"parameters\": {\"file:1/model.onnx\": \"%%%\"}}");
    assertThat(notBase64.status()).as(notBase64.toString()).isEqualTo(400);
    assertThat(notBase64.error()).contains("base64");
    assertThat(models.constructions("beta/1")).isZero();
  }

  @Test
  void unload_withUnloadDependents_unloads_andAnUnknownParameterIsRefused() {
    http.post("/v2/repository/models/beta/load", "");
    Response bad =
        http.post("/v2/repository/models/beta/unload", "{\"parameters\": {\"force\": true}}");
    assertThat(bad.status()).as(bad.toString()).isEqualTo(400);
    Response r =
        http.post(
            "/v2/repository/models/beta/unload", "{\"parameters\": {\"unload_dependents\": true}}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("unloaded").toString()).isEqualTo("[\"beta/1\"]");
  }

  @Test
  void modelReady_onAFreshServer_isTrueWithoutLoading_andFalseAfterAnUnload() {
    assertThat(http.get("/v2/models/gamma/ready").status()).isEqualTo(200);
    assertThat(models.constructions("gamma/1")).isZero();
    http.post("/v2/repository/models/gamma/load", "");
    http.post("/v2/repository/models/gamma/unload", "");
    Response after = http.get("/v2/models/gamma/ready");
    assertThat(after.status()).isEqualTo(400);
    assertThat(after.error()).contains("unloaded");
  }

  @Test
  void modelReady_afterAnUnloadOfTheName_isFalseForEveryVersion_untilTheNameLoadsAgain() {
    assertThat(http.post("/v2/repository/models/alpha/unload", "").status()).isEqualTo(200);
    assertThat(http.get("/v2/models/alpha/versions/1/ready").status()).isEqualTo(400);
    assertThat(http.get("/v2/models/alpha/versions/2/ready").status()).isEqualTo(400);
    assertThat(http.post("/v2/repository/models/alpha/load", "").status()).isEqualTo(200);
    assertThat(http.get("/v2/models/alpha/versions/2/ready").status()).isEqualTo(200);
    assertThat(http.get("/v2/models/alpha/versions/1/ready").status()).isEqualTo(200);
    assertThat(models.constructions("alpha/1")).isZero(); // ready again, loaded on demand
  }

  @Test
  void load_onReadyModel_isNoOp() {
    assertThat(http.post("/v2/repository/models/beta/load", "").status()).isEqualTo(200);
    assertThat(http.post("/v2/repository/models/beta/load", "").status()).isEqualTo(200);
    assertThat(models.constructions("beta/1")).isEqualTo(1);
  }

  @Test
  void index_withReadyTrue_listsOnlyReadyModels() {
    http.post("/v2/repository/models/beta/load", "");
    Map<String, JsonNode> rows = index("{\"ready\": true}");
    assertThat(rows).containsOnlyKeys("beta/1");
  }

  @Test
  void unload_ofLoadedModel_makesItUnavailableWithReason() {
    http.post("/v2/repository/models/beta/load", "");
    Response r = http.post("/v2/repository/models/beta/unload", "");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("unloaded").toString()).isEqualTo("[\"beta/1\"]");
    JsonNode row = index("").get("beta/1");
    assertThat(row.get("state").asText()).isEqualTo("UNAVAILABLE");
    assertThat(row.get("reason").asText()).isEqualTo("unloaded");
    assertThat(models.built()).singleElement().satisfies(m -> assertThat(m.isCleared()).isTrue());
  }

  @Test
  void unload_ofName_unloadsEveryResidentVersion() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\"}");
    http.post("/model/add", "{\"model_id\": \"alpha/2\"}");
    Response r = http.post("/v2/repository/models/alpha/unload", "");
    assertThat(r.json().get("unloaded"))
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder("alpha/1", "alpha/2");
    assertThat(server.manager().keys()).isEmpty();
  }

  @Test
  void unload_ofModelNotLoaded_isNoOpAnd200() {
    Response r = http.post("/v2/repository/models/gamma/unload", "");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("unloaded")).isEmpty();
  }

  @Test
  void loadAndUnload_ofUnknownModel_answer404() {
    assertThat(http.post("/v2/repository/models/nope/load", "").status()).isEqualTo(404);
    Response r = http.post("/v2/repository/models/nope/unload", "");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.error()).contains("nope");
  }

  @Test
  void index_afterEvictionByCountBudget_reasonSaysEvicted() {
    http.post("/v2/repository/models/alpha/load", "");
    http.post("/v2/repository/models/beta/load", "");
    http.post("/v2/repository/models/gamma/load", "");
    Map<String, JsonNode> rows = index("");
    assertThat(rows.get("alpha/2").get("state").asText()).isEqualTo("UNAVAILABLE");
    assertThat(rows.get("alpha/2").get("reason").asText())
        .contains("evicted")
        .contains("count budget");
    assertThat(rows.get("beta/1").get("state").asText()).isEqualTo("READY");
    assertThat(rows.get("gamma/1").get("state").asText()).isEqualTo("READY");
  }

  @Test
  void index_afterFailedLoad_reasonCarriesFailure() {
    models.failLoad("gamma/1", new IllegalStateException("weights are corrupt"));
    assertThat(http.post("/v2/repository/models/gamma/load", "").status()).isEqualTo(500);
    JsonNode row = index("").get("gamma/1");
    assertThat(row.get("state").asText()).isEqualTo("UNAVAILABLE");
    assertThat(row.get("reason").asText()).contains("weights are corrupt");
  }

  @Test
  void index_whileLoadIsInProgress_showsLoading() throws Exception {
    Gate gate = new Gate();
    models.gateLoad("beta/1", gate);
    CompletableFuture<Response> load =
        CompletableFuture.supplyAsync(() -> http.post("/v2/repository/models/beta/load", ""));
    gate.awaitEntered();
    assertThat(index("").get("beta/1").get("state").asText()).isEqualTo("LOADING");
    gate.open();
    assertThat(load.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(index("").get("beta/1").get("state").asText()).isEqualTo("READY");
  }

  @Test
  void index_whileUnloadWaitsForLease_showsUnloading() throws Exception {
    Gate gate = new Gate();
    models.gateInfer("beta/1", gate);
    CompletableFuture<Response> infer =
        CompletableFuture.supplyAsync(
            () ->
                http.post(
                    "/v2/models/beta/infer",
                    "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}"));
    gate.awaitEntered();
    CompletableFuture<Response> unload =
        CompletableFuture.supplyAsync(() -> http.post("/v2/repository/models/beta/unload", ""));
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> index("").get("beta/1").get("state").asText().equals("UNLOADING"));
    gate.open();
    assertThat(infer.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(unload.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(index("").get("beta/1").get("state").asText()).isEqualTo("UNAVAILABLE");
    assertThat(models.violations()).isEmpty();
  }
}
