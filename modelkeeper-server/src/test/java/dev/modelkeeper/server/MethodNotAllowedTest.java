package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A known path asked with a wrong method answers 405 with {@code Allow}, fixed paths and templates
 * alike; {@code OPTIONS} answers 204 with {@code Allow}; an unknown path stays 404.
 */
class MethodNotAllowedTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static ModelKeeperServer server;
  private static HttpClient client;

  @BeforeAll
  static void start() {
    server = TestServer.fake(FakeModels.of("alpha/1"), b -> b);
    client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void trace_onFixedPath_answers405WithAllowAndJsonError() throws Exception {
    HttpResponse<String> r = send("TRACE", "/v2/health/live");
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("GET, HEAD, OPTIONS");
    String error = MAPPER.readTree(r.body()).get("error").textValue();
    assertThat(error).contains("TRACE").contains("/v2/health/live").doesNotContain("Exception");
    // counted under its route, like any other answer of that route
    assertThat(send("GET", "/metrics").body())
        .contains(
            "modelkeeper_http_requests_total{method=\"TRACE\",route=\"/v2/health/live\","
                + "status=\"405\"} 1.0");
  }

  @Test
  void get_onTemplatedPostPath_answers405WithAllowPost() throws Exception {
    HttpResponse<String> r = send("GET", "/v2/models/alpha/versions/1/infer");
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("POST, OPTIONS");
    assertThat(MAPPER.readTree(r.body()).get("error").textValue())
        .contains("GET")
        .contains("/v2/models/alpha/versions/1/infer");
    assertThat(send("DELETE", "/model/registry").statusCode()).isEqualTo(405);
  }

  @Test
  void options_onKnownPath_answers204WithAllow() throws Exception {
    HttpResponse<String> r = send("OPTIONS", "/v2/models/alpha/infer");
    assertThat(r.statusCode()).isEqualTo(204);
    assertThat(r.headers().firstValue("Allow")).hasValue("POST, OPTIONS");
  }

  @Test
  void head_onGetPath_answers200WithoutBody() throws Exception {
    HttpResponse<String> r = send("HEAD", "/v2/health/live");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEmpty();
  }

  @Test
  void anyMethod_onUnknownPath_staysNotFound() throws Exception {
    for (String method : new String[] {"GET", "POST", "TRACE", "OPTIONS"}) {
      HttpResponse<String> r = send(method, "/v2/nothing/here");
      assertThat(r.statusCode()).as(method).isEqualTo(404);
      assertThat(r.headers().firstValue("Allow")).as(method).isEmpty();
    }
  }

  private static HttpResponse<String> send(String method, String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
            .timeout(TIMEOUT)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
