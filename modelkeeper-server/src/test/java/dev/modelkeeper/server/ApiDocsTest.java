package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document describes exactly the routes the server registered, and the docs page loads
 * Swagger UI from the server itself.
 */
class ApiDocsTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static ModelKeeperServer server;
  private static Http http;

  @BeforeAll
  static void start() {
    server = TestServer.fake(FakeModels.of("alpha/1"), b -> b);
    http = Http.to(server.port());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void openapi_isJsonWithVersionField() throws Exception {
    Response r = http.get("/v2/openapi.json");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.contentType()).startsWith("application/json");
    JsonNode doc = MAPPER.readTree(r.body());
    assertThat(doc.path("openapi").asText()).startsWith("3.");
    assertThat(doc.path("info").path("description").asText())
        .contains("`name`, `datatype` and `shape` must come before `data`");
  }

  @Test
  void openapi_describesExactlyTheRegisteredRoutes() throws Exception {
    JsonNode paths = MAPPER.readTree(http.get("/v2/openapi.json").body()).get("paths");
    List<String> documented = new ArrayList<>();
    for (Map.Entry<String, JsonNode> path : paths.properties()) {
      path.getValue()
          .fieldNames()
          .forEachRemaining(m -> documented.add(m.toUpperCase(Locale.ROOT) + " " + path.getKey()));
    }
    assertThat(server.httpRoutes()).isNotEmpty().doesNotHaveDuplicates();
    assertThat(documented).containsExactlyInAnyOrderElementsOf(server.httpRoutes());
  }

  @Test
  void openapi_documentsAnErrorForEveryOperation() throws Exception {
    JsonNode paths = MAPPER.readTree(http.get("/v2/openapi.json").body()).get("paths");
    for (JsonNode path : paths) {
      for (JsonNode operation : path) {
        JsonNode responses = operation.get("responses");
        assertThat(responses.has("400") && responses.has("500") && responses.has("503"))
            .as(operation.path("operationId").asText())
            .isTrue();
      }
    }
  }

  @Test
  void docsPage_isHtml_whoseSwaggerUiFilesAreServedLocally() {
    Response page = http.get("/v2/docs");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.contentType()).startsWith("text/html");
    assertThat(page.body()).contains("/v2/openapi.json").doesNotContain("https://");
    Matcher assets = Pattern.compile("(?:src|href)=\"([^\"]+)\"").matcher(page.body());
    List<String> files = new ArrayList<>();
    while (assets.find()) {
      if (!assets.group(1).startsWith("data:")) { // inline (the empty icon): nothing is fetched
        files.add(assets.group(1));
      }
    }
    assertThat(files)
        .containsExactlyInAnyOrder("/v2/docs/swagger-ui.css", "/v2/docs/swagger-ui-bundle.js");
    for (String file : files) {
      Response r = http.get(file);
      assertThat(r.status()).as(file).isEqualTo(200);
      assertThat(r.body().length()).as(file).isGreaterThan(10_000);
    }
    assertThat(http.get("/v2/docs/index.html").status()).isEqualTo(404);
    assertThat(http.get("/v2/docs/..%2Fopenapi.json").status()).isIn(400, 404);
  }
}
