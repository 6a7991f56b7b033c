package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The management API over loopback: add (with aliases), remove, clear and the registry. */
class ManagementApiTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[2],\"datatype\":\"FP32\",\"data\":[1,2]}]}";

  private FakeModels models;
  private ModelKeeperServer server;
  private Http http;

  @BeforeEach
  void start() {
    models = FakeModels.of("alpha/1", "alpha/2", "beta/1").size("beta/1", 5000);
    server = TestServer.fake(models, b -> b.budgets(m -> m.withMaxModels(3)));
    http = Http.to(server.port());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private JsonNode registryRow(String modelId) {
    for (JsonNode row : http.get("/model/registry").json().get("models")) {
      if (row.get("model_id").asText().equals(modelId)) {
        return row;
      }
    }
    return null;
  }

  @Test
  void add_ofBareName_loadsHighestVersionUnderNameSlashVersion() {
    Response r = http.post("/model/add", "{\"model_id\": \"alpha\"}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("model_id").asText()).isEqualTo("alpha/2");
    assertThat(server.manager().keys()).containsExactly("alpha/2");
  }

  @Test
  void registry_afterAdd_showsStateSizeLoadTimeLeasesAndBudget() {
    http.post("/model/add", "{\"model_id\": \"beta/1\", \"api_key\": \"k\"}");
    JsonNode registry = http.get("/model/registry").json();
    assertThat(registry.get("max_models").asInt()).isEqualTo(3);
    assertThat(registry.get("resident_models").asInt()).isEqualTo(1);
    assertThat(registry.get("resident_bytes").asLong()).isEqualTo(5000);
    JsonNode row = registryRow("beta/1");
    assertThat(row.get("state").asText()).isEqualTo("READY");
    assertThat(row.get("size_bytes").asLong()).isEqualTo(5000);
    assertThat(row.get("load_seconds").asDouble()).isGreaterThanOrEqualTo(0);
    assertThat(row.get("leases").asInt()).isZero();
    assertThat(row.get("aliases")).isEmpty();
  }

  @Test
  void registry_whileInferenceRuns_countsItsLease() throws Exception {
    Gate gate = new Gate();
    models.gateInfer("beta/1", gate);
    CompletableFuture<Response> infer =
        CompletableFuture.supplyAsync(() -> http.post("/v2/models/beta/infer", X));
    gate.awaitEntered();
    assertThat(registryRow("beta/1").get("leases").asInt()).isEqualTo(1);
    gate.open();
    assertThat(infer.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(registryRow("beta/1").get("leases").asInt()).isZero();
  }

  @Test
  void add_withAlias_registersUnderAliasAndInferenceUsesIt() {
    Response r =
        http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("model_id").asText()).isEqualTo("stable");
    assertThat(r.json().get("alias_of").asText()).isEqualTo("alpha/1");
    assertThat(registryRow("stable").get("alias_of").asText()).isEqualTo("alpha/1");
    Response infer = http.post("/v2/models/stable/infer", X);
    assertThat(infer.status()).as(infer.toString()).isEqualTo(200);
    assertThat(infer.json().get("model_name").asText()).isEqualTo("stable");
    assertThat(infer.json().get("model_version").asText()).isEqualTo("1");
    assertThat(models.constructions("alpha/1")).isEqualTo(1);
  }

  @Test
  void alias_afterEviction_reloadsTargetOnDemand() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    http.post("/v2/repository/models/stable/unload", "");
    assertThat(server.manager().keys()).isEmpty();
    assertThat(http.post("/v2/models/stable/infer", X).status()).isEqualTo(200);
    assertThat(server.manager().keys()).containsExactly("stable");
    assertThat(models.constructions("alpha/1")).isEqualTo(2);
  }

  @Test
  void registry_ofTarget_listsItsAliases() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\"}");
    http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    assertThat(registryRow("alpha/1").get("aliases"))
        .extracting(JsonNode::asText)
        .containsExactly("stable");
  }

  @Test
  void add_withAliasNamingAnotherModel_answers409() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    Response r =
        http.post("/model/add", "{\"model_id\": \"alpha/2\", \"model_id_alias\": \"stable\"}");
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.error()).contains("alpha/1");
  }

  @Test
  void add_withInvalidAlias_answers400() {
    Response r =
        http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"../x\"}");
    assertThat(r.status()).isEqualTo(400);
  }

  @Test
  void add_withoutModelId_answers400() {
    Response r = http.post("/model/add", "{\"api_key\": \"k\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("model_id");
  }

  @Test
  void add_ofUnknownModel_answers404() {
    Response r = http.post("/model/add", "{\"model_id\": \"nope/3\"}");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.error()).contains("nope");
  }

  @Test
  void remove_ofAlias_unloadsAndForgetsIt() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    Response r = http.post("/model/remove", "{\"model_id\": \"stable\"}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("removed")).extracting(JsonNode::asText).containsExactly("stable");
    assertThat(server.manager().keys()).isEmpty();
    assertThat(http.post("/v2/models/stable/infer", X).status()).isEqualTo(404);
  }

  @Test
  void remove_ofVersionedModel_unloadsOnlyThatVersion() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\"}");
    http.post("/model/add", "{\"model_id\": \"alpha/2\"}");
    http.post("/model/remove", "{\"model_id\": \"alpha/1\"}");
    assertThat(server.manager().keys()).containsExactly("alpha/2");
  }

  @Test
  void remove_ofModelNotLoaded_isNoOp() {
    Response r = http.post("/model/remove", "{\"model_id\": \"beta\"}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("removed")).isEmpty();
  }

  @Test
  void clear_withModelsAndAliases_unloadsEverything() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    http.post("/model/add", "{\"model_id\": \"beta\"}");
    Response r = http.post("/model/clear", "");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("removed"))
        .extracting(JsonNode::asText)
        .containsExactly("beta/1", "stable");
    assertThat(server.manager().keys()).isEmpty();
    assertThat(http.get("/model/registry").json().get("models")).isEmpty();
    assertThat(models.built()).allSatisfy(m -> assertThat(m.isCleared()).isTrue());
  }

  private Response postWithModelHeader(String path, String modelHeader, String body) {
    return http.send(
        HttpRequest.newBuilder(URI.create(http.base() + path))
            .timeout(Http.TIMEOUT)
            .header("X-Model-Id", modelHeader)
            .POST(BodyPublishers.ofString(body)));
  }

  @Test
  void add_withModelHeaderAndNoBody_loadsTheHeadersModel() {
    Response r = postWithModelHeader("/model/add", "alpha/1", "");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("model_id").asText()).isEqualTo("alpha/1");
    assertThat(server.manager().keys()).containsExactly("alpha/1");
  }

  @Test
  void add_withModelHeaderNamingTheAlias_registersTheAlias() {
    Response r =
        postWithModelHeader(
            "/model/add", "stable", "{\"model_id\": \"alpha/1\", \"model_id_alias\": \"stable\"}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(server.manager().keys()).containsExactly("stable");
  }

  @Test
  void add_withModelHeaderDisagreeingWithBody_answers400AndLoadsNothing() {
    Response r = postWithModelHeader("/model/add", "beta", "{\"model_id\": \"alpha/1\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("X-Model-Id");
    assertThat(server.manager().keys()).isEmpty();
  }

  @Test
  void remove_withModelHeaderAndNoBody_unloadsTheHeadersModel() {
    http.post("/model/add", "{\"model_id\": \"alpha/1\"}");
    Response r = postWithModelHeader("/model/remove", "alpha", "");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("removed")).extracting(JsonNode::asText).containsExactly("alpha/1");
    assertThat(server.manager().keys()).isEmpty();
  }
}
