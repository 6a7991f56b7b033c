package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A sweep of malformed requests against the real demo models: every one is answered 4xx with a JSON
 * error, and the server is healthy and correct afterwards.
 */
class MalformedInputTest {

  private static final String VALID =
      "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\","
          + " \"data\": [5.1, 3.5, 1.4, 0.2]}]}";

  private static ModelKeeperServer server;
  private static Http http;

  @BeforeAll
  static void start() {
    server = TestServer.demo(b -> b.budgets(m -> m.withMaxRequestBytes(1 << 20)));
    http = Http.to(server.port());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static String input(String fields) {
    return "{\"inputs\": [{" + fields + "}]}";
  }

  private static List<String> malformedInferBodies() {
    StringBuilder deep = new StringBuilder();
    for (int i = 0; i < 200; i++) {
      deep.append('[');
    }
    deep.append('1');
    for (int i = 0; i < 200; i++) {
      deep.append(']');
    }
    StringBuilder manyDims = new StringBuilder("1");
    for (int i = 0; i < 100; i++) {
      manyDims.append(",1");
    }
    return List.of(
        // truncated and broken JSON
        "",
        "   ",
        "{",
        "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2",
        "{\"inputs\": []} trailing",
        "{\"inputs\": [],}",
        "{'inputs': []}",
        "{\"inputs\": [{\"name\": \"input\", \"name\": \"input\"}]}",
        deep.toString(),
        "{\"inputs\": " + deep + "}",
        // wrong top-level and field types
        "[]",
        "\"inputs\"",
        "null",
        "42",
        "{\"inputs\": {}}",
        "{\"inputs\": \"input\"}",
        "{\"inputs\": [42]}",
        "{\"id\": 7, \"inputs\": []}",
        "{\"inputs\": [], \"outputs\": \"label\"}",
        "{\"inputs\": [], \"outputs\": [5]}",
        input("\"name\": 5, \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input("\"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": \"1,4\", \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1.5, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [[1], [4]], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input("\"name\": \"input\", \"shape\": [1, 4], \"datatype\": 7, \"data\": [1, 2, 3, 4]"),
        input("\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": \"1234\""),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, \"2\", 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [true, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [{}, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [null, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, [2], 3, 4]"),
        input("\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\""),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4],"
                + " \"parameters\": {\"binary_data_size\": 16}"),
        // huge and negative shapes
        input(
            "\"name\": \"input\", \"shape\": [1000000000, 1000000000], \"datatype\": \"FP32\", \"data\": [1]"),
        input(
            "\"name\": \"input\", \"shape\": [9223372036854775807, 2], \"datatype\": \"FP32\", \"data\": [1]"),
        input(
            "\"name\": \"input\", \"shape\": [99999999999999999999999], \"datatype\": \"FP32\", \"data\": [1]"),
        input("\"name\": \"input\", \"shape\": [1e30], \"datatype\": \"FP32\", \"data\": [1]"),
        input(
            "\"name\": \"input\", \"shape\": ["
                + manyDims
                + "], \"datatype\": \"FP32\", \"data\": [1]"),
        input(
            "\"name\": \"input\", \"shape\": [100000, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [-1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, -4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [0, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        // valid JSON, wrong for the model
        input(
            "\"name\": \"input\", \"shape\": [1, 5], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4, 5]"),
        input(
            "\"name\": \"input\", \"shape\": [4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"other\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"INT32\", \"data\": [1, 2, 3, 4]"),
        input(
            "\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"BF16\", \"data\": [1, 2, 3, 4]"),
        input("\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"\", \"data\": [1, 2, 3, 4]"),
        "{\"inputs\": ["
            + "{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]},"
            + "{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\", \"data\": [1, 2, 3, 4]}]}",
        "{\"inputs\": []}");
  }

  @Test
  void infer_withMalformedBodies_answers4xxJsonErrorsEveryTime() {
    List<String> problems = new ArrayList<>();
    for (String body : malformedInferBodies()) {
      check(
          problems,
          "POST /v2/models/iris/infer " + abbreviate(body),
          http.post("/v2/models/iris/infer", body));
    }
    check(
        problems,
        "invalid UTF-8",
        http.post(
            "/v2/models/iris/infer",
            new byte[] {'{', '"', 'i', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}'}));
    assertThat(problems).isEmpty();
    assertHealthy();
  }

  @Test
  void bodyCutShort_saysWhereItsObjectBegan_inThePlainWordsOfAPosition() {
    for (String path : List.of("/model/add", "/v2/models/iris/infer")) {
      Http.Response r = http.post(path, "{\"model_id\": \"iris\"");
      assertThat(r.status()).as(path).isEqualTo(400);
      assertThat(r.error())
          .as(path)
          .contains("start marker at line: 1, column: 1)")
          .doesNotContain("Source")
          .doesNotContain("REDACTED");
    }
  }

  @Test
  void requests_withTraversalInModelNames_answer4xxJsonErrors() {
    List<String> problems = new ArrayList<>();
    String[][] requests = {
      {"POST", "/v2/models/..%2F..%2Fetc%2Fpasswd/infer", VALID},
      {"POST", "/v2/models/%2e%2e/infer", VALID},
      {"POST", "/v2/models/..%5C..%5Cwindows/infer", VALID},
      {"POST", "/v2/models/iris/versions/..%2F1/infer", VALID},
      {"POST", "/v2/models/iris/versions/-1/infer", VALID},
      {"POST", "/v2/models/iris%00/infer", VALID},
      {"GET", "/v2/models/..%2F..%2Fsecret", null},
      {"GET", "/v2/models/%2e%2e%2f%2e%2e/ready", null},
      {"POST", "/v2/repository/models/..%2Fsecret/load", ""},
      {"POST", "/v2/repository/models/%2e%2e/unload", ""},
      {"POST", "/model/add", "{\"model_id\": \"../../etc/passwd\"}"},
      {"POST", "/model/add", "{\"model_id\": \"iris/../../x\"}"},
      {"POST", "/model/add", "{\"model_id\": \"/etc/passwd\"}"},
      {"POST", "/model/add", "{\"model_id\": \"iris\", \"model_id_alias\": \"..\"}"},
      {"POST", "/model/add", "{\"model_id\": \"iris\", \"model_id_alias\": \"a/../../b\"}"},
      {"POST", "/model/remove", "{\"model_id\": \"../iris\"}"},
    };
    for (String[] r : requests) {
      check(problems, r[0] + " " + r[1] + " " + r[2], send(r[0], r[1], r[2]));
    }
    assertThat(problems).isEmpty();
    assertThat(server.manager().keys()).allMatch(k -> k.matches("[a-z-]+/[0-9]+"));
    assertHealthy();
  }

  @Test
  void requests_toUnknownRoutes_answer404JsonErrors() {
    List<String> problems = new ArrayList<>();
    String[][] requests = {
      {"POST", "/", VALID}, // GET / is the status page
      {"GET", "/nope", null},
      {"GET", "/v1/models/iris", null},
      {"POST", "/v2/models/iris/explain", VALID},
      {"POST", "/v2/models/iris/infer/extra", VALID},
      {"GET", "/v2/models/iris/infer", null},
      {"PUT", "/v2/models/iris/infer", VALID},
      {"DELETE", "/model/registry", null},
      {"GET", "/v2/models/iris/versions", null},
      {"POST", "/v2/repository/models/iris", ""},
      {"GET", "/model/add", null},
    };
    for (String[] r : requests) {
      Response resp = send(r[0], r[1], r[2]);
      check(problems, r[0] + " " + r[1], resp);
      if (resp.status() != 404 && resp.status() != 405) {
        problems.add(r[0] + " " + r[1] + " answered " + resp.status() + ", expected 404 or 405");
      }
    }
    assertThat(problems).isEmpty();
    assertHealthy();
  }

  @Test
  void rawRequests_withBrokenHttp_answer4xxJsonErrors() throws Exception {
    String hugeHeader = "X-Big: " + "a".repeat(64 * 1024);
    String[] raw = {
      "GARBAGE\r\n\r\n",
      "GET /v2/models/iris%00/ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + hugeHeader + "\r\nConnection: close\r\n\r\n",
      "POST /v2/models/iris/infer HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    };
    List<String> problems = new ArrayList<>();
    for (String request : raw) {
      String response = rawExchange(request);
      int status = Integer.parseInt(response.substring(9, 12));
      int split = response.indexOf("\r\n\r\n");
      String head = response.substring(0, split);
      String body = response.substring(split + 4);
      if (status < 400
          || status >= 500
          || !head.toLowerCase().contains("application/json")
          || !body.contains("\"error\"")) {
        problems.add(abbreviate(request) + " -> " + abbreviate(response));
      }
    }
    assertThat(problems).isEmpty();
    assertHealthy();
  }

  private static String rawExchange(String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      InputStream in = socket.getInputStream();
      for (int n; (n = in.read(buf)) > 0; ) {
        out.write(buf, 0, n);
        String text = out.toString(StandardCharsets.ISO_8859_1);
        int split = text.indexOf("\r\n\r\n");
        Matcher m = Pattern.compile("(?i)content-length: *(\\d+)").matcher(text);
        if (split > 0 && m.find() && text.length() >= split + 4 + Integer.parseInt(m.group(1))) {
          break;
        }
      }
      return out.toString(StandardCharsets.UTF_8);
    }
  }

  private static Response send(String method, String path, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(http.base() + path));
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    return http.send(b);
  }

  private static void check(List<String> problems, String what, Response r) {
    if (r.status() < 400 || r.status() >= 500) {
      problems.add(what + " -> " + r);
      return;
    }
    try {
      JsonNode error = r.json().get("error");
      if (error == null || !error.isTextual() || error.textValue().isBlank()) {
        problems.add(what + " -> no JSON error: " + r);
      }
    } catch (AssertionError notJson) {
      problems.add(what + " -> not JSON: " + r);
    }
  }

  private static void assertHealthy() {
    assertThat(http.get("/v2/health/live").status()).isEqualTo(200);
    assertThat(http.get("/v2/health/ready").status()).isEqualTo(200);
    Response ok = http.post("/v2/models/iris/infer", VALID);
    assertThat(ok.status()).as(ok.toString()).isEqualTo(200);
    assertThat(ok.json().get("outputs").get(1).get("data").get(0).asInt()).isZero();
  }

  private static String abbreviate(String s) {
    return s.length() > 90 ? s.substring(0, 90) + "..." : s;
  }
}
