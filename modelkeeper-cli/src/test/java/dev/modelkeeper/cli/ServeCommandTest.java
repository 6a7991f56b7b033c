package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.testkit.Http;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code modelkeeper serve}: flags, environment variables, startup summary, fail-fast errors. */
class ServeCommandTest {

  @TempDir static Path cache;

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();
  private final Map<String, String> env = new HashMap<>();

  private CommandLine cli() {
    return ModelKeeperCli.commandLine(env, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  /** Parses {@code args} and starts the server without blocking. */
  private ModelKeeperServer start(String... args) {
    CommandLine cl = cli();
    CommandLine.ParseResult parsed = cl.parseArgs(args);
    ServeCommand serve = (ServeCommand) parsed.subcommand().commandSpec().userObject();
    return serve.start();
  }

  /** {@code serve} on 127.0.0.1, port 0 (unless {@code more} names them) and a test cache. */
  private static String[] serve(String... more) {
    List<String> all = new ArrayList<>(List.of("serve", "--cache-dir", cache.toString()));
    if (!List.of(more).contains("--host")) {
      all.addAll(List.of("--host", "127.0.0.1"));
    }
    if (!List.of(more).contains("--port")) {
      all.addAll(List.of("--port", "0"));
    }
    if (!List.of(more).contains("--grpc-port")) {
      all.addAll(List.of("--grpc-port", "0"));
    }
    if (!List.of(more).contains("--metrics-port")) {
      all.addAll(List.of("--metrics-port", "0"));
    }
    all.addAll(List.of(more));
    return all.toArray(new String[0]);
  }

  @Test
  void serve_withPortZero_printsUrlRepositoryBudgetsAndModelsAndServes() throws Exception {
    try (ModelKeeperServer server = start(serve("--max-models", "3", "--max-bytes", "4GiB"))) {
      String printed = out.toString();
      assertThat(printed).contains("ModelKeeper is serving http://127.0.0.1:" + server.port());
      assertThat(server.port()).isPositive().isNotEqualTo(8000);
      assertThat(server.grpcPort()).isPositive().isNotEqualTo(8001);
      assertThat(printed).contains("gRPC:        127.0.0.1:" + server.grpcPort());
      assertThat(printed)
          .contains("repository:")
          .contains("demo-repository")
          .contains("bundled demo");
      assertThat(printed).contains("budget:      3 models, 4 GiB");
      assertThat(printed).contains("iris/1").contains("mlp-small/2").contains("types/1");
      String url = "http://127.0.0.1:" + server.port();
      assertThat(printed)
          .contains("status page: " + url + "/\n")
          .contains("API docs:    " + url + "/v2/docs\n");
      assertThat(server.awaitReady(Duration.ofSeconds(30))).isTrue();
      Http http = Http.to(server.port());
      assertThat(http.get("/v2/health/ready").status()).isEqualTo(200);
      assertThat(http.get("/").status()).isEqualTo(200); // the printed pages exist
      assertThat(http.get("/v2/docs").status()).isEqualTo(200);
      assertThat(http.post("/v2/repository/index", "").json()).hasSize(6);
    }
  }

  @Test
  void serve_withEnvironmentVariables_readsEverySetting() {
    env.put("MODELKEEPER_MAX_MODELS", "3");
    env.put("MODELKEEPER_MAX_BYTES", "512MB");
    env.put("MODELKEEPER_LIFECYCLE_TIMEOUT", "5s");
    env.put("MODELKEEPER_REQUEST_TIMEOUT", "PT10S");
    env.put("MODELKEEPER_AUTH_TOKEN", "s3cret");
    env.put("MODELKEEPER_PRELOAD", "iris,mlp-small/1");
    env.put("MODELKEEPER_PIN", "iris");
    env.put("MODELKEEPER_WORKER_THREADS", "7");
    env.put("MODELKEEPER_IDLE_TIMEOUT", "300s");
    try (ModelKeeperServer server = start(serve())) {
      ServerConfig c = server.config();
      assertThat(c.budgets().maxModels()).isEqualTo(3);
      assertThat(c.budgets().maxBytes()).isEqualTo(512_000_000L);
      assertThat(c.timeouts().lifecycle()).isEqualTo(Duration.ofSeconds(5));
      assertThat(c.timeouts().request()).isEqualTo(Duration.ofSeconds(10));
      assertThat(c.security().authToken()).isEqualTo("s3cret");
      assertThat(c.preload()).containsExactly("iris", "mlp-small/1");
      assertThat(c.pin()).containsExactly("iris");
      assertThat(c.scheduling().workerThreads()).isEqualTo(7);
      assertThat(c.timeouts().idle()).isEqualTo(Duration.ofSeconds(300));
      assertThat(out.toString())
          .contains("auth:        bearer token")
          .contains("pinned:      iris");
    }
  }

  @Test
  void serve_withFlagAndEnvironment_flagWins() {
    env.put("MODELKEEPER_MAX_MODELS", "3");
    try (ModelKeeperServer server = start(serve("--max-models", "5"))) {
      assertThat(server.config().budgets().maxModels()).isEqualTo(5);
    }
  }

  @Test
  void serve_withRepositoryFolder_servesIt() throws Exception {
    Path demo = DemoRepository.materialize(cache.resolve("other"));
    try (ModelKeeperServer server = start(serve("--repository", demo.toString()))) {
      assertThat(out.toString()).contains("repository:  " + demo.toRealPath());
      assertThat(server.repositoryModels()).hasSize(6);
    }
  }

  private int failingRun(String... args) {
    return cli().execute(args);
  }

  @Test
  void serve_withBadFlagValues_failsNamingTheFlag() {
    for (List<String> bad :
        List.of(
            List.of("--max-models", "0", "--max-models"),
            List.of("--max-models", "many", "--max-models"),
            List.of("--max-bytes", "lots", "--max-bytes"),
            List.of("--port", "70000", "--port"),
            List.of("--host", "no-such-host.invalid", "--host"),
            List.of("--lifecycle-timeout", "soon", "--lifecycle-timeout"),
            List.of("--repository", "/no/such/folder", "--repository"),
            List.of("--preload", "nope", "--preload"),
            List.of("--pin", "iris,mlp-small,types", "--pin"))) {
      out.getBuffer().setLength(0);
      err.getBuffer().setLength(0);
      String[] args =
          bad.get(0).equals("--pin")
              ? serve("--max-models", "2", bad.get(0), bad.get(1))
              : serve(bad.get(0), bad.get(1));
      assertThat(failingRun(args)).as(bad.toString()).isEqualTo(ModelKeeperCli.BAD_CONFIG);
      assertThat(err.toString()).as(bad.toString()).contains("invalid " + bad.get(2) + ":");
      assertThat(out.toString()).as(bad.toString()).doesNotContain("ModelKeeper is serving");
    }
  }

  @Test
  void serve_withBadEnvironmentValue_failsNamingTheVariable() {
    env.put("MODELKEEPER_MAX_BYTES", "lots");
    assertThat(failingRun(serve())).isEqualTo(ModelKeeperCli.BAD_CONFIG);
    assertThat(err.toString())
        .contains("invalid MODELKEEPER_MAX_BYTES (--max-bytes)")
        .contains("'lots' is not a size");
  }

  @Test
  void serve_onPortInUse_failsNamingThePort() {
    try (ModelKeeperServer first = start(serve())) {
      out.getBuffer().setLength(0);
      String[] args = serve("--port", Integer.toString(first.port()));
      assertThat(failingRun(args)).isEqualTo(ModelKeeperCli.BAD_CONFIG);
      assertThat(err.toString())
          .contains("invalid --port: cannot listen on 127.0.0.1:" + first.port());
    }
  }

  @Test
  void cli_withUnknownFlag_printsUsageAndFails() {
    assertThat(failingRun("serve", "--frobnicate")).isEqualTo(2);
    assertThat(err.toString()).contains("--frobnicate").contains("Usage: modelkeeper serve");
  }

  @Test
  void serveHelp_listsEveryDocumentedFlag() {
    assertThat(cli().execute("serve", "--help")).isZero();
    for (String flag :
        List.of(
            "--port",
            "--grpc-port",
            "--repository",
            "--cache-dir",
            "--max-models",
            "--max-bytes",
            "--lifecycle-timeout",
            "--auth-token",
            "--preload",
            "--pin",
            "--max-inflight-bytes",
            "--admission-timeout",
            "--body-read-timeout",
            "--max-connections",
            "--allowed-origins",
            "--idle-timeout")) {
      assertThat(out.toString()).contains(flag);
    }
    assertThat(out.toString()).contains("MODELKEEPER_");
  }
}
