package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import org.junit.jupiter.api.Test;

/** Bearer-token auth on management endpoints: off by default, on with a token. */
class AuthTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  @Test
  void managementEndpoints_withoutToken_areOpenByDefault() {
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("alpha/1"), b -> b)) {
      Http http = Http.to(server.port());
      assertThat(http.post("/model/add", "{\"model_id\": \"alpha\"}").status()).isEqualTo(200);
      assertThat(http.get("/model/registry").status()).isEqualTo(200);
      assertThat(http.post("/v2/repository/index", "").status()).isEqualTo(200);
      assertThat(http.post("/v2/repository/models/alpha/unload", "").status()).isEqualTo(200);
    }
  }

  @Test
  void managementEndpoints_withAuthOn_answer401WithoutTheToken() {
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("alpha/1"), b -> b.security(s -> s.withAuthToken("s3cret")))) {
      Http http = Http.to(server.port());
      for (Response r :
          new Response[] {
            http.post("/model/add", "{\"model_id\": \"alpha\"}"),
            http.post("/model/remove", "{\"model_id\": \"alpha\"}"),
            http.post("/model/clear", ""),
            http.get("/model/registry"),
            http.post("/v2/repository/index", ""),
            http.post("/v2/repository/models/alpha/load", ""),
            http.post("/v2/repository/models/alpha/unload", "")
          }) {
        assertThat(r.status()).as(r.toString()).isEqualTo(401);
        assertThat(r.error()).contains("Bearer");
      }
      http.withToken("wrong");
      Response wrong = http.get("/model/registry");
      assertThat(wrong.status()).isEqualTo(401);
      assertThat(wrong.error()).contains("not valid");
      assertThat(server.manager().keys()).isEmpty();
      assertThat(http.get("/model/nothing-here").status()).isEqualTo(404);
      assertThat(http.get("/metrics").body())
          .contains(
              "modelkeeper_http_requests_total{method=\"GET\",route=\"/model/registry\",status=\"401\"} 2.0");
    }
  }

  @Test
  void managementEndpoints_withAuthOnAndToken_answer200() {
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("alpha/1"), b -> b.security(s -> s.withAuthToken("s3cret")))) {
      Http http = Http.to(server.port()).withToken("s3cret");
      assertThat(http.post("/model/add", "{\"model_id\": \"alpha\"}").status()).isEqualTo(200);
      assertThat(http.get("/model/registry").status()).isEqualTo(200);
      assertThat(http.post("/v2/repository/models/alpha/unload", "").status()).isEqualTo(200);
    }
  }

  @Test
  void inferenceAndHealth_withAuthOn_stayOpen() {
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("alpha/1"), b -> b.security(s -> s.withAuthToken("s3cret")))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
      assertThat(http.get("/v2/models/alpha").status()).isEqualTo(200);
      assertThat(http.get("/v2/health/ready").status()).isEqualTo(200);
      assertThat(http.get("/metrics").status()).isEqualTo(200);
    }
  }
}
