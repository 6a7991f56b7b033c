package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.onnx.testkit.S3Store;
import dev.modelkeeper.testkit.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server with {@code --repository s3://host:port/bucket/prefix} against a real S3
 * server (S3Proxy) holding the demo repository: two server processes sharing one cache folder load
 * every model and download each model file once between them; a server given the wrong secret
 * starts, names the refusal once in its log and answers 503 naming it.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class S3RepositoryTest {

  private static final String TOKEN = "interop-secret";
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  @TempDir static Path dir;

  private static S3Store store;
  private static Path demo;
  private static String repository;

  @BeforeAll
  static void startStore() throws Exception {
    store = S3Store.start(Files.createDirectories(dir.resolve("store")));
    demo = DemoRepository.materialize(dir.resolve("demo"));
    store.upload(demo, "models", "demo/");
    repository = "s3://127.0.0.1:" + store.port() + "/models/demo";
  }

  @AfterAll
  static void stopStore() throws Exception {
    if (store != null) {
      store.close();
    }
  }

  private static Map<String, String> credentials(String secret) {
    return Map.of("AWS_ACCESS_KEY_ID", S3Store.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", secret);
  }

  private static HttpResponse<String> post(ServerProcess server, String path, String body)
      throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://" + server.httpAddress() + path))
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofMinutes(3))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void twoServersSharingACache_serveEveryModel_andDownloadEachFileOnce() throws Exception {
    Path cache = Files.createDirectories(dir.resolve("shared-cache"));
    List<String> models;
    try (Stream<Path> files = Files.walk(demo)) {
      models =
          files
              .filter(p -> p.getFileName().toString().equals("model.onnx"))
              .map(p -> demo.relativize(p).getParent().getParent().toString())
              .distinct()
              .sorted()
              .toList();
    }
    try (ServerProcess a =
            ServerProcess.builder()
                .cacheDir(cache)
                .env(credentials(S3Store.SECRET))
                .args("--repository", repository, "--auth-token", TOKEN)
                .start();
        ServerProcess b =
            ServerProcess.builder()
                .cacheDir(cache)
                .env(credentials(S3Store.SECRET))
                .args("--repository", repository, "--auth-token", TOKEN)
                .start()) {
      // every model (its highest version), loaded by both servers at once
      List<CompletableFuture<HttpResponse<String>>> loads = new ArrayList<>();
      for (String name : models) {
        for (ServerProcess s : List.of(a, b)) {
          loads.add(
              CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      return post(s, "/v2/repository/models/" + name + "/load", "{}");
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                  }));
        }
      }
      for (CompletableFuture<HttpResponse<String>> load : loads) {
        HttpResponse<String> r = load.get(5, TimeUnit.MINUTES);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      }
      String iris =
          "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
              + "\"data\":[5.1,3.5,1.4,0.2]}]}";
      for (ServerProcess s : List.of(a, b)) {
        HttpResponse<String> r = post(s, "/v2/models/iris/infer", iris);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        HttpResponse<String> index = post(s, "/v2/repository/index", "{}");
        for (String model : models) {
          assertThat(index.body()).contains("\"name\":\"" + model + "\"");
        }
      }
      List<String> downloads = new ArrayList<>();
      for (ServerProcess s : List.of(a, b)) {
        s.output().stream().filter(l -> l.contains("downloaded s3://")).forEach(downloads::add);
      }
      assertThat(downloads)
          .as("one download per model between both servers")
          .hasSize(models.size());
      for (String model : models) {
        assertThat(downloads).filteredOn(l -> l.contains("/demo/" + model + "/")).hasSize(1);
      }
    }
  }

  @Test
  void aWrongSecret_isNamedOnce_andAnswered503() throws Exception {
    try (ServerProcess s =
        ServerProcess.builder()
            .cacheDir(Files.createDirectories(dir.resolve("wrong-secret-cache")))
            .env(credentials("not-the-secret"))
            .args("--repository", repository, "--auth-token", TOKEN)
            .start()) {
      HttpResponse<String> r = null;
      for (int i = 0; i < 3; i++) {
        r =
            post(
                s,
                "/v2/models/iris/infer",
                "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                    + "\"data\":[5.1,3.5,1.4,0.2]}]}");
      }
      assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
      assertThat(r.body()).contains("refused the credentials (SignatureDoesNotMatch)");
      // one WARN line for the problem, however many requests meet it
      assertThat(s.output())
          .filteredOn(l -> l.contains("refused the credentials") && l.contains(" WARN "))
          .hasSize(1);
      assertThat(s.output())
          .filteredOn(l -> l.contains("refused the credentials"))
          .noneSatisfy(l -> assertThat(l).contains("Exception"));
      assertThat(s.output()).noneSatisfy(l -> assertThat(l).startsWith("\tat "));
    }
  }

  @Test
  void awsEndpointUrl_pointsPlainBucketLocationsAtTheStore() throws Exception {
    Map<String, String> env = new HashMap<>(credentials(S3Store.SECRET));
    env.put("AWS_ENDPOINT_URL", "http://localhost:" + store.port());
    env.put("AWS_REGION", "eu-west-1");
    try (ServerProcess s =
        ServerProcess.builder()
            .cacheDir(Files.createDirectories(dir.resolve("endpoint-cache")))
            .env(env)
            .args("--repository", "s3://models/demo", "--auth-token", TOKEN)
            .start()) {
      HttpResponse<String> r =
          post(
              s,
              "/v2/models/iris/infer",
              "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                  + "\"data\":[5.1,3.5,1.4,0.2]}]}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(s.output())
          .anySatisfy(l -> assertThat(l).contains("repository:  s3://models/demo"));
    }
  }
}
